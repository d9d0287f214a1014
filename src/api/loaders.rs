//! Data loaders: every cross-node field resolves through one of these, so a query over 500
//! nodes costs one store statement per kind of thing it reads, not one per node.
//! A fresh set is made per request (its cache must not outlive the request).

use std::collections::HashMap;
use std::sync::Arc;

use async_graphql::dataloader::{DataLoader, HashMapCache, Loader};

use crate::domain::{Container, ContainerStats, Datastore, Evidence, Field, Id};
use crate::store::{Store, StoreError};

#[derive(Clone)]
pub struct StoreLoader(pub Arc<dyn Store>);

#[derive(Clone, Debug)]
pub struct LoadError(pub Arc<StoreError>);

impl From<StoreError> for LoadError {
    fn from(e: StoreError) -> Self {
        LoadError(Arc::new(e))
    }
}

impl From<LoadError> for crate::error::Error {
    fn from(e: LoadError) -> Self {
        match &*e.0 {
            StoreError::NotFound(m) => crate::error::Error::NotFound(m.clone()),
            StoreError::Conflict(m) => crate::error::Error::Conflict(m.clone()),
            StoreError::Invalid(m) => crate::error::Error::BadInput(m.clone()),
            StoreError::Unavailable(m) => crate::error::Error::Unavailable(m.clone()),
            StoreError::Internal(m) => crate::error::Error::Internal(m.clone()),
        }
    }
}

macro_rules! by_id_loader {
    ($name:ident, $value:ty, $method:ident, $key:expr) => {
        pub struct $name(pub Arc<dyn Store>);
        impl Loader<Id> for $name {
            type Value = $value;
            type Error = LoadError;
            async fn load(&self, keys: &[Id]) -> Result<HashMap<Id, $value>, LoadError> {
                let rows = self.0.$method(keys).await?;
                Ok(rows.into_iter().map(|r| ($key(&r), r)).collect())
            }
        }
    };
}

by_id_loader!(ContainerLoader, Container, containers_by_ids, |c: &Container| c.id);
by_id_loader!(FieldLoader, Field, fields_by_ids, |f: &Field| f.id);
by_id_loader!(DatastoreLoader, Datastore, datastores_by_ids, |d: &Datastore| d.id);
by_id_loader!(StatsLoader, ContainerStats, container_stats, |s: &ContainerStats| s.container_id);

pub struct EvidenceLoader(pub Arc<dyn Store>);
impl Loader<Id> for EvidenceLoader {
    type Value = Vec<Evidence>;
    type Error = LoadError;
    async fn load(&self, keys: &[Id]) -> Result<HashMap<Id, Vec<Evidence>>, LoadError> {
        let mut out: HashMap<Id, Vec<Evidence>> = keys.iter().map(|k| (*k, Vec::new())).collect();
        for e in self.0.evidence_for_edges(keys).await? {
            out.entry(e.edge_id).or_default().push(e);
        }
        Ok(out)
    }
}

pub struct HasLineageLoader(pub Arc<dyn Store>);
impl Loader<Id> for HasLineageLoader {
    type Value = bool;
    type Error = LoadError;
    async fn load(&self, keys: &[Id]) -> Result<HashMap<Id, bool>, LoadError> {
        let linked = self.0.fields_with_lineage(keys).await?;
        let mut out: HashMap<Id, bool> = keys.iter().map(|k| (*k, false)).collect();
        for id in linked {
            out.insert(id, true);
        }
        Ok(out)
    }
}

type Cached<L> = DataLoader<L, HashMapCache>;

/// The per-request set of loaders. Each caches what it loaded for the request, so a resolver
/// that prefetches a whole graph's keys in one batch leaves every node's fields to the cache
/// (the loaders' own batching window is short and would split a large graph in several).
pub struct Loaders {
    pub containers: Cached<ContainerLoader>,
    pub fields: Cached<FieldLoader>,
    pub datastores: Cached<DatastoreLoader>,
    pub stats: Cached<StatsLoader>,
    pub evidence: Cached<EvidenceLoader>,
    pub has_lineage: Cached<HasLineageLoader>,
}

impl Loaders {
    pub fn new(store: Arc<dyn Store>) -> Self {
        // Batches above a few thousand keys would make one huge statement; the loader splits them.
        const MAX_BATCH: usize = 5000;
        Loaders {
            containers: DataLoader::with_cache(ContainerLoader(store.clone()), tokio::spawn, HashMapCache::default())
                .max_batch_size(MAX_BATCH),
            fields: DataLoader::with_cache(FieldLoader(store.clone()), tokio::spawn, HashMapCache::default())
                .max_batch_size(MAX_BATCH),
            datastores: DataLoader::with_cache(DatastoreLoader(store.clone()), tokio::spawn, HashMapCache::default())
                .max_batch_size(MAX_BATCH),
            stats: DataLoader::with_cache(StatsLoader(store.clone()), tokio::spawn, HashMapCache::default())
                .max_batch_size(MAX_BATCH),
            evidence: DataLoader::with_cache(EvidenceLoader(store.clone()), tokio::spawn, HashMapCache::default())
                .max_batch_size(MAX_BATCH),
            has_lineage: DataLoader::with_cache(HasLineageLoader(store), tokio::spawn, HashMapCache::default())
                .max_batch_size(MAX_BATCH),
        }
    }
}
