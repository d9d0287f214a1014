//! Data loaders: every cross-node field resolves through one of these, so a query over 500
//! nodes costs one store statement per kind of thing it reads, not one per node.
//! A fresh set is made per request (its cache must not outlive the request).
//!
//! # How it fits
//!
//! `Loaders` is the per-request set of async-graphql `DataLoader`s: containers, fields, datastores, field counts,
//! container stats, evidence and has-lineage, each keyed by id. The three that give every key a value (stats, field
//! counts, has-lineage) are one generic `EveryKeyLoader<V, R>` with the empty value, the store read and the row mapping
//! as arguments. `fieldCount` reads only the live field count (`Store::field_counts`, an index-only count);
//! `linkedFieldCount` needs `container_stats`, which also looks at every field's edges, and when both are asked the
//! stats feed the counts (`Prefetching::feed`), one read for the two. Every cross-node field goes through one of them,
//! so a graph of 500 nodes costs one store read per kind of thing, not one per node. A resolver that knows a whole
//! answer's ids prefetches them (`Prefetching::prefetch`): one store read straight into the loader's cache, without
//! `DataLoader::load_many`'s 1 ms batching window, which a graph query would otherwise wait out once per kind.
//! `lineageGraph` also attaches each node's prefetched container record to its `GraphNode`, so a node's half-dozen
//! container fields read it in place instead of each asking the loader (and cloning the record); `impact` and `piiFlow`
//! attach their items' records the same way, or, when an item's selection asks only a record's id and name, just
//! those (`schema::lineage::Shown`: a read of two or three properties that bypasses the cache). A new `Loaders` is
//! made for each request, so no cache outlives a request and replicas never serve each other stale data.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use async_graphql::dataloader::{DataLoader, HashMapCache, Loader};

use crate::domain::{Container, ContainerStats, Datastore, Evidence, Field, Id, IoEntry, Job, MetadataAssertion, Run};
use crate::service::records::{Read, Reader};
use crate::store::StoreError;

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
        pub struct $name(pub Reader);
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
by_id_loader!(JobLoader, Job, jobs_by_ids, |j: &Job| j.id);
by_id_loader!(RunLoader, Run, runs_by_ids, |r: &Run| r.id);

/// A store read of one value per key, for many keys in one statement. Every key asked gets a value:
/// `empty` for a key the store has no row for, so a key read once (loaded, prefetched or fed)
/// never goes back to the store.
pub struct EveryKeyLoader<V, R> {
    store: Reader,
    /// The value of a key the store gives no row for.
    empty: fn(Id) -> V,
    /// The store's rows for these keys.
    read: for<'a> fn(&'a Reader, &'a [Id]) -> Read<'a, R>,
    /// A row as its key and value.
    entry: fn(R) -> (Id, V),
}

impl<V: Clone + Send + Sync + 'static, R: Send + 'static> Loader<Id> for EveryKeyLoader<V, R> {
    type Value = V;
    type Error = LoadError;
    async fn load(&self, keys: &[Id]) -> Result<HashMap<Id, V>, LoadError> {
        let mut out: HashMap<Id, V> = keys.iter().map(|k| (*k, (self.empty)(*k))).collect();
        out.extend((self.read)(&self.store, keys).await?.into_iter().map(self.entry));
        Ok(out)
    }
}

/// The datasets of each job (as `Store::job_io`), empty for a job with none.
pub type JobIoLoader = EveryKeyLoader<Vec<IoEntry>, (Id, Vec<IoEntry>)>;
/// The datasets of each run (the store's run ids), empty for a run with none.
pub type RunIoLoader = EveryKeyLoader<Vec<IoEntry>, (Id, Vec<IoEntry>)>;

/// The job datasets on each container (as `Store::jobs_of_ends`, with the job's id): what
/// `producers`, `consumers` and `lastWrite` of one container share, one read for a page of them.
pub type ContainerJobsLoader = EveryKeyLoader<Vec<(Id, IoEntry)>, (Id, Vec<(Id, IoEntry)>)>;

/// `jobs_of_ends` rows grouped by the container they are on.
fn by_container(rows: Vec<(Id, IoEntry)>) -> Vec<(Id, Vec<(Id, IoEntry)>)> {
    let mut out: HashMap<Id, Vec<(Id, IoEntry)>> = HashMap::new();
    for (job, e) in rows {
        if let Some(c) = e.end.container_id() {
            out.entry(c).or_default().push((job, e));
        }
    }
    out.into_iter().collect()
}

/// Rows keyed by owner, grouped into one list per owner.
fn grouped(rows: Vec<(Id, IoEntry)>) -> Vec<(Id, Vec<IoEntry>)> {
    let mut out: HashMap<Id, Vec<IoEntry>> = HashMap::new();
    for (k, e) in rows {
        out.entry(k).or_default().push(e);
    }
    out.into_iter().collect()
}

/// Container stats, zeros for a container without fields (the store gives no row for it).
pub type StatsLoader = EveryKeyLoader<ContainerStats, ContainerStats>;
/// Live field counts (0 for a container without fields).
pub type FieldCountLoader = EveryKeyLoader<i64, (Id, i64)>;
/// Whether a field has a live field edge (the store lists those that do).
pub type HasLineageLoader = EveryKeyLoader<bool, Id>;

pub struct EvidenceLoader(pub Reader);
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

/// A container's own metadata rows, every source's (for its effective `description`, `owners`
/// and `tags`): one read for the batch; the three fields of one container share it.
pub struct MetadataLoader(pub Reader);
impl Loader<Id> for MetadataLoader {
    type Value = Vec<MetadataAssertion>;
    type Error = LoadError;
    async fn load(&self, keys: &[Id]) -> Result<HashMap<Id, Vec<MetadataAssertion>>, LoadError> {
        let mut out: HashMap<Id, Vec<MetadataAssertion>> = keys.iter().map(|k| (*k, Vec::new())).collect();
        for m in self.0.container_metadata_of(keys).await? {
            out.entry(m.container_id).or_default().push(m);
        }
        Ok(out)
    }
}

/// Runs by their OpenLineage `runId` (evidence names its run so): one read for a page's evidence.
pub struct RunByRunIdLoader(pub Reader);
impl Loader<String> for RunByRunIdLoader {
    type Value = crate::domain::Run;
    type Error = LoadError;
    async fn load(&self, keys: &[String]) -> Result<HashMap<String, crate::domain::Run>, LoadError> {
        Ok(self.0.runs_by_run_ids(keys).await?.into_iter().map(|r| (r.run_id.clone(), r)).collect())
    }
}

/// Jobs by namespace and name (evidence names its job so); the store reads one name at a time,
/// and the cache keeps a request from asking for the same job twice.
pub struct JobByNameLoader(pub Reader);
impl Loader<(String, String)> for JobByNameLoader {
    type Value = crate::domain::Job;
    type Error = LoadError;
    async fn load(
        &self,
        keys: &[(String, String)],
    ) -> Result<HashMap<(String, String), crate::domain::Job>, LoadError> {
        let mut out = HashMap::new();
        for (namespace, name) in keys {
            if let Some(j) = self.0.job_by_name(namespace, name).await? {
                out.insert((namespace.clone(), name.clone()), j);
            }
        }
        Ok(out)
    }
}

type Cached<L> = DataLoader<L, HashMapCache>;

/// Batches above a few thousand keys would make one huge statement; they are split.
const MAX_BATCH: usize = 5000;

/// A loader and the keys already read into its cache by `prefetch`.
pub struct Prefetching<L: Loader<Id>> {
    pub loader: Cached<L>,
    read: Mutex<HashSet<Id>>,
}

impl<L: Loader<Id, Error = LoadError>> Prefetching<L> {
    fn new(loader: L) -> Self {
        Prefetching {
            loader: DataLoader::with_cache(loader, tokio::spawn, HashMapCache::default()).max_batch_size(MAX_BATCH),
            read: Mutex::new(HashSet::new()),
        }
    }

    /// Forgets what was read, so the next loads read the store again.
    fn clear(&self) {
        self.loader.clear::<Id>();
        self.read.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// One value through the loader (batched with the other nodes' calls, or from the cache).
    pub async fn load_one(&self, key: Id) -> Result<Option<L::Value>, LoadError> {
        self.loader.load_one(key).await
    }

    /// Puts values read by another loader's statement into the cache, as `prefetch` would.
    pub async fn feed(&self, values: impl IntoIterator<Item = (Id, L::Value)>) {
        let values: Vec<(Id, L::Value)> = {
            let mut read = self.read.lock().unwrap_or_else(|p| p.into_inner());
            values
                .into_iter()
                .inspect(|(k, _)| {
                    read.insert(*k);
                })
                .collect()
        };
        self.loader.feed_many(values).await;
    }

    /// Reads these keys now, straight from the store (one statement per `MAX_BATCH` keys not
    /// read yet, all at once), into the cache, so the per-node resolvers that follow find them there. Not
    /// `DataLoader::load_many`: that waits out the loader's batching window (1 ms, 1-2 ms with
    /// tokio's timer) before it reads, on every call, and a graph query prefetches three or
    /// four kinds in turn.
    pub async fn prefetch(&self, keys: impl IntoIterator<Item = Id>) -> Result<(), LoadError> {
        let wanted: Vec<Id> = {
            let mut read = self.read.lock().unwrap_or_else(|p| p.into_inner());
            let mut wanted: Vec<Id> = keys.into_iter().filter(|k| read.insert(*k)).collect();
            wanted.sort_unstable();
            wanted
        };
        // The chunks are read at once: on Neo4j each is a statement on its own connection, so a
        // graph of 8,000 nodes waits for one round trip rather than two in turn.
        let reads = wanted.chunks(MAX_BATCH).map(|chunk| self.loader.loader().load(chunk));
        for found in futures_util::future::try_join_all(reads).await? {
            self.loader.feed_many(found).await;
        }
        Ok(())
    }
}

/// The per-request set of loaders. Each caches what it loaded for the request, so a resolver
/// that prefetches a whole graph's keys in one batch leaves every node's fields to the cache
/// (the loaders' own batching window is short and would split a large graph in several).
pub struct Loaders {
    pub containers: Prefetching<ContainerLoader>,
    pub fields: Prefetching<FieldLoader>,
    pub datastores: Prefetching<DatastoreLoader>,
    pub stats: Prefetching<StatsLoader>,
    pub field_counts: Prefetching<FieldCountLoader>,
    pub evidence: Prefetching<EvidenceLoader>,
    pub has_lineage: Prefetching<HasLineageLoader>,
    pub jobs: Prefetching<JobLoader>,
    pub runs: Prefetching<RunLoader>,
    pub job_io: Prefetching<JobIoLoader>,
    pub run_io: Prefetching<RunIoLoader>,
    pub container_jobs: Prefetching<ContainerJobsLoader>,
    pub runs_by_run_id: Cached<RunByRunIdLoader>,
    pub jobs_by_name: Cached<JobByNameLoader>,
    /// What is failing, computed once per request the first time a health is asked
    /// (`service::jobs::HealthIndex`).
    /// By instant: `None` for now, else an as-of answer's.
    pub health_index: tokio::sync::Mutex<
        std::collections::HashMap<Option<crate::domain::Timestamp>, Arc<crate::service::jobs::HealthIndex>>,
    >,
    pub metadata: Prefetching<MetadataLoader>,
    /// Jobs' latest runs as of an instant (`None`: the job had none then), by (instant, job):
    /// an as-of graph reads its jobs' runs at once, and each `Job.latestRun` finds its own here.
    pub latest_runs_at:
        std::sync::Mutex<std::collections::HashMap<(crate::domain::Timestamp, Id), Option<crate::domain::Run>>>,
}

impl Loaders {
    /// Empties every cache: what a long-lived subscription does before each change it sends.
    pub fn clear(&self) {
        self.containers.clear();
        self.fields.clear();
        self.datastores.clear();
        self.stats.clear();
        self.field_counts.clear();
        self.evidence.clear();
        self.has_lineage.clear();
        self.jobs.clear();
        self.runs.clear();
        self.job_io.clear();
        self.run_io.clear();
        self.container_jobs.clear();
        self.runs_by_run_id.clear::<String>();
        self.jobs_by_name.clear::<(String, String)>();
        if let Ok(mut h) = self.health_index.try_lock() {
            h.clear();
        }
        if let Ok(mut runs) = self.latest_runs_at.lock() {
            runs.clear();
        }
        self.metadata.clear();
    }

    /// Loaders reading through `store` (`Lineage::reader`).
    pub fn new(store: Reader) -> Self {
        Loaders {
            containers: Prefetching::new(ContainerLoader(store.clone())),
            fields: Prefetching::new(FieldLoader(store.clone())),
            datastores: Prefetching::new(DatastoreLoader(store.clone())),
            stats: Prefetching::new(EveryKeyLoader {
                store: store.clone(),
                empty: |k| ContainerStats { container_id: k, field_count: 0, linked_field_count: 0 },
                read: |store, keys| store.container_stats(keys),
                entry: |s| (s.container_id, s),
            }),
            field_counts: Prefetching::new(EveryKeyLoader {
                store: store.clone(),
                empty: |_| 0,
                read: |store, keys| store.field_counts(keys),
                entry: |count| count,
            }),
            evidence: Prefetching::new(EvidenceLoader(store.clone())),
            metadata: Prefetching::new(MetadataLoader(store.clone())),
            has_lineage: Prefetching::new(EveryKeyLoader {
                store: store.clone(),
                empty: |_| false,
                read: |store, keys| store.fields_with_lineage(keys),
                entry: |id| (id, true),
            }),
            jobs: Prefetching::new(JobLoader(store.clone())),
            runs: Prefetching::new(RunLoader(store.clone())),
            job_io: Prefetching::new(EveryKeyLoader {
                store: store.clone(),
                empty: |_| Vec::new(),
                read: |store, keys| Box::pin(async move { Ok(grouped(store.job_io(keys).await?)) }),
                entry: |row| row,
            }),
            run_io: Prefetching::new(EveryKeyLoader {
                store: store.clone(),
                empty: |_| Vec::new(),
                read: |store, keys| Box::pin(async move { Ok(grouped(store.run_io(keys).await?)) }),
                entry: |row| row,
            }),
            runs_by_run_id: DataLoader::with_cache(
                RunByRunIdLoader(store.clone()),
                tokio::spawn,
                HashMapCache::default(),
            )
            .max_batch_size(MAX_BATCH),
            jobs_by_name: DataLoader::with_cache(JobByNameLoader(store.clone()), tokio::spawn, HashMapCache::default()),
            container_jobs: Prefetching::new(EveryKeyLoader {
                store,
                empty: |_| Vec::new(),
                read: |store, keys| {
                    Box::pin(async move {
                        let ends: Vec<crate::domain::End> =
                            keys.iter().map(|&id| crate::domain::End::Container { id }).collect();
                        Ok(by_container(store.jobs_of_ends(&ends).await?))
                    })
                },
                entry: |row| row,
            }),
            health_index: tokio::sync::Mutex::new(std::collections::HashMap::new()),
            latest_runs_at: std::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }
}
