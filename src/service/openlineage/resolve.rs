//! Resolving OpenLineage datasets to catalog containers: the `Resolver` an event's datasets go
//! through (namespace to datastores, name to the best-matching container, symlinks, auto-creation)
//! and `Known`, what it learnt, handed from event to event so a batch reads each dataset once.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::auth::Permission;
use crate::domain::{Container, Datastore, End, Id};
use crate::error::{Error, Result};
use crate::ingest::openlineage::{self as ol, Event};
use crate::service::{Caller, Lineage};

use super::Unresolved;

/// What resolution learns that holds for a whole batch of events: a batch's events name the
/// same datasets and fields over and over, and within a store session no other writer can add
/// a container or field meanwhile (the batch's own creations update it).
#[derive(Default)]
pub(super) struct Known {
    /// Datasets resolved so far.
    resolved: HashMap<(String, String), Resolution>,
    /// Field ids by lowercased name, per container.
    fields: HashMap<Id, HashMap<String, Id>>,
    /// The datastore of each container read or created.
    datastores: HashMap<Id, Id>,
}

/// The namespace as written, with the spellings of one scheme folded together.
fn normalize_namespace(ns: &str) -> String {
    let ns = ns.trim().trim_end_matches('/').to_lowercase();
    for (alias, canonical) in [("postgresql://", "postgres://"), ("s3a://", "s3://"), ("s3n://", "s3://")] {
        if let Some(rest) = ns.strip_prefix(alias) {
            return format!("{canonical}{rest}");
        }
    }
    ns
}

/// An asset that is not in the catalog keeps its OpenLineage identity as its fqn.
pub fn external_fqn(namespace: &str, name: &str) -> String {
    if namespace.ends_with('/') || name.starts_with('/') {
        format!("{namespace}{name}")
    } else {
        format!("{namespace}/{name}")
    }
}

const FILE_SCHEMES: [&str; 7] = ["s3://", "gs://", "gcs://", "file://", "hdfs://", "abfss://", "wasbs://"];

/// What a dataset resolves to: the best-matching container in each datastore it matches that
/// the caller can edit (best first), or why it matches none.
type Resolution = std::result::Result<Vec<Container>, Unresolved>;

/// One end a dataset gives a connection: a container (with it), or an external asset.
type Resolved = (End, Option<Container>);

/// Resolves OpenLineage datasets to containers, caching per event. Seed 000: where several
/// datastores match a dataset, the event applies to the matches the caller can edit; a dataset
/// whose namespace a datastore lists but with no writable match is denied (tables not yet
/// catalogued included); a dataset no datastore lists stays an external endpoint.
pub(super) struct Resolver<'a> {
    lineage: &'a Lineage,
    caller: &'a Caller,
    datastores: Vec<Datastore>,
    cache: HashMap<(String, String), Resolution>,
    /// Containers read ahead for the event's datasets by `prefetch`, and the datasets covered.
    pool: Vec<Container>,
    prefetched: HashSet<(String, String)>,
    /// Field ids by lowercased name, per container (see `Known`).
    pub(super) fields: HashMap<Id, HashMap<String, Id>>,
    /// Container id to datastore id of every container read or created (see `Known`).
    container_datastores: HashMap<Id, Id>,
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
            cache: known.resolved,
            pool: Vec::new(),
            prefetched: HashSet::new(),
            fields: known.fields,
            container_datastores: known.datastores,
        }
    }

    /// What this resolver learnt, for the next event's.
    pub(super) fn into_known(self) -> Known {
        Known { resolved: self.cache, fields: self.fields, datastores: self.container_datastores }
    }

    /// The datastores that list the namespace, in the order the store lists datastores.
    fn namespace_datastores(&self, namespace: &str) -> Vec<Id> {
        let ns = normalize_namespace(namespace);
        self.datastores
            .iter()
            .filter(|d| d.namespaces.iter().any(|n| normalize_namespace(n) == ns))
            .map(|d| d.id)
            .collect()
    }

    fn writable(&self, datastore: Id) -> bool {
        self.caller.has(datastore, Permission::Editor)
    }

    /// Reads the candidate containers of every dataset the event names in one store call, so
    /// resolving an event costs one lookup rather than one per dataset.
    pub(super) async fn prefetch(&mut self, event: &Event) -> Result<()> {
        let mut wanted: BTreeSet<(String, String)> = BTreeSet::new();
        for d in event.datasets() {
            wanted.insert((d.namespace.clone(), d.name.clone()));
            wanted.extend(d.symlinks.iter().map(|l| (l.namespace.clone(), l.name.clone())));
            if let Some(prev) = d.lifecycle.as_ref().and_then(|l| l.previous.as_ref()) {
                wanted.insert((prev.namespace.clone(), prev.name.clone()));
            }
            wanted.extend(d.column_lineage.iter().map(|e| (e.input.namespace.clone(), e.input.name.clone())));
        }
        let mut names = BTreeSet::new();
        let mut datastores = BTreeSet::new();
        let mut covered = Vec::new();
        // Containers resolved by earlier events of the batch: no read, but their fields may be.
        let mut known: Vec<Id> = Vec::new();
        for (namespace, name) in wanted {
            if let Some(hit) = self.cache.get(&(namespace.clone(), name.clone())) {
                known.extend(hit.iter().flatten().map(|c| c.id));
                continue;
            }
            let ds = self.namespace_datastores(&namespace);
            if ds.is_empty() {
                continue;
            }
            names.extend(crate::service::name_candidates(&name.trim().to_lowercase()));
            datastores.extend(ds);
            covered.push((namespace, name));
        }
        if !names.is_empty() {
            let names: Vec<String> = names.into_iter().collect();
            let datastores: Vec<Id> = datastores.into_iter().collect();
            self.pool = self.lineage.store.containers_by_names(&names, Some(&datastores)).await?;
            self.container_datastores.extend(self.pool.iter().map(|c| (c.id, c.datastore_id)));
            self.prefetched.extend(covered);
        }
        // Schemas and column lineage name fields: read the candidates' fields in the same breath.
        let names_fields = event
            .datasets()
            .any(|d| !d.schema.is_empty() || !d.column_lineage.is_empty() || !d.dataset_wide.is_empty());
        let mut missing: Vec<Id> =
            self.pool.iter().map(|c| c.id).chain(known).filter(|id| !self.fields.contains_key(id)).collect();
        missing.sort_unstable();
        missing.dedup();
        if names_fields && !missing.is_empty() {
            self.fields.extend(self.lineage.field_names(&missing).await?);
        }
        Ok(())
    }

    async fn find(&mut self, namespace: &str, name: &str) -> Result<Resolution> {
        let key = (namespace.to_string(), name.to_string());
        if let Some(hit) = self.cache.get(&key) {
            return Ok(hit.clone());
        }
        let ns = normalize_namespace(namespace);
        let matching = self.namespace_datastores(namespace);
        let unresolved = |reason: &'static str, message: String| Unresolved {
            namespace: namespace.to_string(),
            name: name.to_string(),
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
            } else if FILE_SCHEMES.iter().any(|s| ns.starts_with(s)) {
                Err(unresolved("notFound", format!("no container matches the path {name:?}")))
            } else if !name.contains('.') {
                Err(unresolved(
                    "unparsableName",
                    format!("{name:?} has no schema and table to match or create a container with"),
                ))
            } else {
                Err(unresolved(
                    "creationDisabled",
                    format!("no container {name:?} in the datastore; auto-creation is off"),
                ))
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
        let wanted = key.1.trim().to_lowercase();
        let read;
        let pool: &[Container] = if self.prefetched.contains(key) {
            &self.pool
        } else {
            read = self
                .lineage
                .store
                .containers_by_names(&crate::service::name_candidates(&wanted), Some(datastores))
                .await?;
            &read
        };
        let mut best: Vec<(u8, usize, Container)> = Vec::new();
        for (order, ds) in datastores.iter().enumerate() {
            let mut top: Option<(u8, &Container)> = None;
            for c in pool.iter().filter(|c| c.datastore_id == *ds) {
                let rank = crate::service::match_rank(&wanted, c);
                if rank > 0 && top.is_none_or(|(r, _)| rank > r) {
                    top = Some((rank, c));
                }
            }
            if let Some((rank, c)) = top {
                best.push((rank, order, c.clone()));
            }
        }
        best.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(best.into_iter().map(|(_, _, c)| c).collect())
    }

    /// Container id to datastore id of every container this resolver has read or created.
    pub(super) fn known_datastores(&self) -> &HashMap<Id, Id> {
        &self.container_datastores
    }

    /// The containers of a dataset, else of its first symlink that resolves; none when neither
    /// does (no auto-creation here).
    pub(super) async fn containers(&mut self, d: &ol::Dataset) -> Result<Vec<Container>> {
        if let Ok(found) = self.find(&d.namespace, &d.name).await? {
            return Ok(found);
        }
        for link in &d.symlinks {
            if let Ok(found) = self.find(&link.namespace, &link.name).await? {
                return Ok(found);
            }
        }
        Ok(Vec::new())
    }

    /// The dataset's ends: its containers, else through a symlink, else auto-created, else one
    /// external asset.
    pub(super) async fn end(
        &mut self,
        d: &ol::Dataset,
        unresolved: &mut BTreeSet<Unresolved>,
    ) -> Result<Vec<Resolved>> {
        let as_ends = |found: Vec<Container>| -> Vec<Resolved> {
            found.into_iter().map(|c| (End::Container { id: c.id }, Some(c))).collect()
        };
        match self.find(&d.namespace, &d.name).await? {
            Ok(found) => return Ok(as_ends(found)),
            Err(first) => {
                for link in &d.symlinks {
                    if let Ok(found) = self.find(&link.namespace, &link.name).await? {
                        return Ok(as_ends(found));
                    }
                }
                match self.auto_create(d, first).await? {
                    Ok(c) => return Ok(as_ends(vec![c])),
                    Err(why) => {
                        unresolved.insert(why);
                    }
                }
            }
        }
        Ok(vec![(End::External { fqn: external_fqn(&d.namespace, &d.name) }, None)])
    }

    /// Seed 002's auto-creation: when enabled, a dataset whose namespace a datastore the caller
    /// can edit lists but whose table is missing becomes a container there with the `schema`
    /// facet's fields. Otherwise, or when that is impossible, the reason it stays unresolved.
    async fn auto_create(
        &mut self,
        d: &ol::Dataset,
        why: Unresolved,
    ) -> Result<std::result::Result<Container, Unresolved>> {
        if why.reason != "creationDisabled" || !self.lineage.auto_create {
            return Ok(Err(why));
        }
        if d.schema.is_empty() {
            return Ok(Err(Unresolved {
                reason: "missingColumns",
                message: "the table is missing and the event's schema facet carries no columns".into(),
                ..why
            }));
        }
        let Some(ds) = self.namespace_datastores(&d.namespace).into_iter().find(|ds| self.writable(*ds)) else {
            return Ok(Err(why));
        };
        let parts: Vec<&str> = d.name.split('.').collect();
        let (database, schema, name) = match parts.as_slice() {
            [schema, table] => (None, Some(schema.to_string()), table.to_string()),
            [db, schema, rest @ ..] => (Some(db.to_string()), Some(schema.to_string()), rest.join(".")),
            _ => return Ok(Err(why)),
        };
        let input = crate::domain::ContainerInput {
            datastore_id: ds,
            name,
            database,
            schema,
            fields: d
                .schema
                .iter()
                .map(|f| crate::domain::FieldInput {
                    name: f.name.clone(),
                    data_type: f.data_type.clone(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let (container, _) = self.lineage.store.upsert_container(input).await?;
        tracing::info!(container = container.id, dataset = %d.name, "container created from an OpenLineage dataset");
        // Another spelling that did not resolve before may name the new container now.
        self.cache.retain(|_, r| r.is_ok());
        self.container_datastores.insert(container.id, container.datastore_id);
        self.cache.insert((d.namespace.clone(), d.name.clone()), Ok(vec![container.clone()]));
        Ok(Ok(container))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_fold_scheme_spellings() {
        assert_eq!(normalize_namespace("postgresql://Warehouse:5432/"), "postgres://warehouse:5432");
        assert_eq!(normalize_namespace("s3a://bucket"), "s3://bucket");
    }

    #[test]
    fn external_names_join_namespace_and_name() {
        assert_eq!(external_fqn("s3://bucket", "raw/orders"), "s3://bucket/raw/orders");
        assert_eq!(external_fqn("file:///", "tmp/x"), "file:///tmp/x");
    }
}
