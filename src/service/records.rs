//! Records by id for the transports' shapes, as stored: REST's `Lookups` (the containers,
//! datastores and fields at an edge's ends, its evidence, containers' counts, read in one batch
//! per kind for a whole answer) and the `Reader` GraphQL's per-request loaders read through.
//! What a caller sees of them is gated where they are shaped (evidence details by
//! `evidence_visible`, jobs and runs through `Lineage::job_views`); they are here so that the
//! store stays private to the service and no write goes around it.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::Lineage;
use crate::domain::{self, End, Id};
use crate::error::Result;
use crate::store::{Store, StoreResult};

/// A batch read in flight (`async_trait` boxes the store's futures; these hand them on).
pub type Read<'a, T> = Pin<Box<dyn Future<Output = StoreResult<Vec<T>>> + Send + 'a>>;

/// The store's batched reads by id and nothing else: what per-request loaders need.
#[derive(Clone)]
pub struct Reader(Arc<dyn Store>);

/// Each a `Store` read of the same name, handed on.
macro_rules! reads {
    ($($name:ident($arg:ident: $key:ty) -> $row:ty;)*) => {
        impl Reader {
            $(
                pub fn $name<'a>(&'a self, $arg: &'a [$key]) -> Read<'a, $row> {
                    self.0.$name($arg)
                }
            )*
        }
    };
}

reads! {
    containers_by_ids(ids: Id) -> domain::Container;
    container_names_by_ids(ids: Id) -> (Id, String);
    fields_by_ids(ids: Id) -> domain::Field;
    field_names_by_ids(ids: Id) -> (Id, Id, String);
    datastores_by_ids(ids: Id) -> domain::Datastore;
    jobs_by_ids(ids: Id) -> domain::Job;
    runs_by_ids(ids: Id) -> domain::Run;
    runs_by_run_ids(run_ids: String) -> domain::Run;
    container_stats(ids: Id) -> domain::ContainerStats;
    field_counts(ids: Id) -> (Id, i64);
    fields_with_lineage(ids: Id) -> Id;
    evidence_for_edges(ids: Id) -> domain::Evidence;
    container_metadata_of(ids: Id) -> domain::MetadataAssertion;
    job_io(ids: Id) -> (Id, domain::IoEntry);
    run_io(ids: Id) -> (Id, domain::IoEntry);
    jobs_of_ends(ends: End) -> (Id, domain::IoEntry);
}

impl Reader {
    /// A job by its OpenLineage namespace and name.
    pub async fn job_by_name(&self, namespace: &str, name: &str) -> StoreResult<Option<domain::Job>> {
        self.0.job_by_name(namespace, name).await
    }
}

/// What an answer's shapes need beyond the service's answer, read once per kind.
#[derive(Default)]
pub struct Records {
    pub containers: HashMap<Id, domain::Container>,
    pub datastores: HashMap<Id, domain::Datastore>,
    pub fields: HashMap<Id, domain::Field>,
    pub evidence: HashMap<Id, Vec<domain::Evidence>>,
    pub stats: HashMap<Id, domain::ContainerStats>,
    pub with_lineage: BTreeSet<Id>,
}

/// What to read.
#[derive(Default)]
pub struct Want {
    pub containers: BTreeSet<Id>,
    pub fields: BTreeSet<Id>,
    pub evidence: BTreeSet<Id>,
    pub stats: BTreeSet<Id>,
    pub has_lineage: BTreeSet<Id>,
}

impl Want {
    /// The containers of an edge's catalogued ends (a field's too: evidence visibility needs its
    /// datastore), the fields at its ends, and its evidence when `evidence`.
    pub fn edges<'e>(mut self, edges: impl IntoIterator<Item = &'e domain::Edge>, evidence: bool) -> Self {
        for e in edges {
            for end in [&e.source, &e.target] {
                self.containers.extend(end.container_id());
                if let End::Field { id, .. } = end {
                    self.fields.insert(*id);
                }
            }
            if evidence {
                self.evidence.insert(e.id);
            }
        }
        self
    }

    pub async fn read(self, lineage: &Lineage) -> Result<Records> {
        lineage.records(self).await
    }
}

impl Lineage {
    /// The batched reads by id for a transport's per-request loaders.
    pub fn reader(&self) -> Reader {
        Reader(self.store.clone())
    }

    /// The records `want` names, one batch per kind, side by side.
    pub async fn records(&self, want: Want) -> Result<Records> {
        let store = &self.store;
        let ids = |s: &BTreeSet<Id>| s.iter().copied().collect::<Vec<Id>>();
        let (containers, fields, evidence, stats, with_lineage) =
            (ids(&want.containers), ids(&want.fields), ids(&want.evidence), ids(&want.stats), ids(&want.has_lineage));
        // Side by side: on Neo4j each read is a round trip of its own.
        let (containers, fields, evidence, stats, with_lineage) = tokio::try_join!(
            async {
                if containers.is_empty() {
                    Ok(Vec::new())
                } else {
                    store.containers_by_ids(&containers).await
                }
            },
            async {
                if fields.is_empty() {
                    Ok(Vec::new())
                } else {
                    store.fields_by_ids(&fields).await
                }
            },
            async {
                if evidence.is_empty() {
                    Ok(Vec::new())
                } else {
                    store.evidence_for_edges(&evidence).await
                }
            },
            async {
                if stats.is_empty() {
                    Ok(Vec::new())
                } else {
                    store.container_stats(&stats).await
                }
            },
            async {
                if with_lineage.is_empty() {
                    Ok(Vec::new())
                } else {
                    store.fields_with_lineage(&with_lineage).await
                }
            },
        )?;
        let datastore_ids: BTreeSet<Id> = containers.iter().map(|c| c.datastore_id).collect();
        let datastores = if datastore_ids.is_empty() {
            Vec::new()
        } else {
            store.datastores_by_ids(&datastore_ids.into_iter().collect::<Vec<_>>()).await?
        };
        let mut by_edge: HashMap<Id, Vec<domain::Evidence>> = HashMap::new();
        for e in evidence {
            by_edge.entry(e.edge_id).or_default().push(e);
        }
        Ok(Records {
            containers: containers.into_iter().map(|c| (c.id, c)).collect(),
            datastores: datastores.into_iter().map(|d| (d.id, d)).collect(),
            fields: fields.into_iter().map(|f| (f.id, f)).collect(),
            evidence: by_edge,
            stats: stats.into_iter().map(|s| (s.container_id, s)).collect(),
            with_lineage: with_lineage.into_iter().collect(),
        })
    }
}
