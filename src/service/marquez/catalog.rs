//! Marquez's sources, tags and dataset versions, from what Tributary keeps: a source is a
//! datastore (or, for an asset outside the catalog, its OpenLineage namespace, the
//! `sourceName` its dataset shows); a tag is a global tag an OpenLineage event created or a tag
//! on a container; a dataset version is a run that wrote the dataset (Marquez makes one per
//! output), or the first run that read it when none wrote it (Marquez's version of an input
//! without one), with the fields of the schema facet the run's latest event sent for it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use sha2::{Digest, Sha256};

use super::*;
use crate::domain::EventFilter;
use crate::ingest::openlineage::naming::normalize_namespace;

/// A Marquez source.
#[derive(Debug, Clone)]
pub struct Source {
    /// The datastore's type in upper case (`POSTGRESQL`), or the namespace's scheme.
    pub kind: String,
    pub name: String,
    pub connection_url: String,
    /// When an event first and last named a dataset of it (none when none did).
    pub created_at: Option<Timestamp>,
    pub updated_at: Option<Timestamp>,
}

/// One version of a dataset.
#[derive(Debug, Clone)]
pub struct DatasetVersion {
    /// The dataset as it is now (its name, source, tags, description).
    pub dataset: Dataset,
    /// A UUID named by the dataset and the run, so the same run's version keeps its id.
    pub version: String,
    pub created_at: Timestamp,
    /// (name, type, description) from the schema facet, in the facet's order.
    pub fields: Vec<(String, Option<String>, Option<String>)>,
    /// The dataset's facets in that event.
    pub facets: serde_json::Value,
    pub run: MarquezRun,
}

/// A run that made a version: the run, its job, when, and the dataset's name in it.
type VersionRun = (Run, Job, Timestamp, DatasetId);

/// The version id of a dataset written (or first read) by a run: a name-based UUID.
pub fn version_id(dataset: &DatasetId, run_id: &str) -> String {
    let digest = Sha256::digest(format!("{}\u{0}{}\u{0}{run_id}", dataset.namespace, dataset.name).as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid().to_string()
}

impl Lineage {
    /// Every source, by name: the datastores, then the namespaces of assets outside the catalog.
    pub async fn marquez_sources(&self, caller: &Caller) -> Result<Vec<Source>> {
        let scan = self.scan(caller).await?;
        let datastores = self.store.list_datastores().await?;
        // Namespace (folded) -> datastore name.
        let mut owner: HashMap<String, String> = HashMap::new();
        let mut out: BTreeMap<String, Source> = BTreeMap::new();
        for d in &datastores {
            let url = crate::service::sql::namespace_of(d);
            for n in d.namespaces.iter().chain(std::iter::once(&url)) {
                owner.entry(normalize_namespace(n)).or_insert_with(|| d.name.clone());
            }
            out.insert(
                d.name.clone(),
                Source {
                    kind: d.kind.to_ascii_uppercase(),
                    name: d.name.clone(),
                    connection_url: url,
                    created_at: None,
                    updated_at: None,
                },
            );
        }
        for (_, e) in &scan.io {
            let name = match (owner.get(&normalize_namespace(&e.namespace)), &e.end) {
                (Some(d), _) => d.clone(),
                (None, End::External { .. }) => e.namespace.clone(),
                // A container reached under a namespace no datastore lists (an alias): its
                // datastore's times are not this namespace's.
                (None, _) => continue,
            };
            let s = out.entry(name.clone()).or_insert_with(|| Source {
                kind: e.namespace.split_once("://").map_or("UNKNOWN", |(scheme, _)| scheme).to_ascii_uppercase(),
                name,
                connection_url: e.namespace.clone(),
                created_at: None,
                updated_at: None,
            });
            s.created_at = Some(s.created_at.map_or(e.at, |t| t.min(e.at)));
            s.updated_at = Some(s.updated_at.map_or(e.at, |t| t.max(e.at)));
        }
        Ok(out.into_values().collect())
    }

    /// One source by name, or NOT_FOUND.
    pub async fn marquez_source(&self, caller: &Caller, name: &str) -> Result<Source> {
        crate::service::require_name("source", name)?;
        self.marquez_sources(caller)
            .await?
            .into_iter()
            .find(|s| s.name == name)
            .ok_or_else(|| Error::NotFound(format!("source {name:?} not found")))
    }

    /// Every tag, by name: the global tags OpenLineage events created and the tags on
    /// containers (their effective values). Reads the catalog's containers a page at a time.
    pub async fn marquez_tags(&self) -> Result<Vec<String>> {
        let mut tags: BTreeSet<String> = self.store.list_docs("tag").await?.into_iter().map(|(k, _)| k).collect();
        let mut page = PageRequest { page: 1, size: MAX_PAGE_SIZE };
        loop {
            let p = self.store.list_containers(None, None, page).await?;
            let n = p.items.len() as i64;
            let ids: Vec<Id> = p.items.iter().map(|c| c.id).collect();
            if !ids.is_empty() {
                let rows = self.store.container_metadata_of(&ids).await?;
                let flags = crate::domain::effective_flags(&rows);
                for (row, shown) in rows.iter().zip(flags) {
                    if shown && row.attribute == "tags" {
                        tags.extend(tag_names(&row.value));
                    }
                }
            }
            if n < page.size {
                break;
            }
            page.page += 1;
        }
        Ok(tags.into_iter().collect())
    }

    /// A page of a dataset's versions, the latest first, and their total (see the module's
    /// notes). Runs of jobs the caller may not see are left out.
    pub async fn marquez_dataset_versions(
        &self,
        caller: &Caller,
        id: &DatasetId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<DatasetVersion>, usize)> {
        let dataset = self.marquez_dataset(caller, id).await?;
        let all = self.version_runs(caller, &dataset).await?;
        let total = all.len();
        let mut out = Vec::new();
        for (run, job, at, named) in all.into_iter().skip(offset).take(limit) {
            out.push(self.version_of(&dataset, run, &job, at, &named).await?);
        }
        Ok((out, total))
    }

    /// One version of a dataset by its id, or NOT_FOUND.
    pub async fn marquez_dataset_version(
        &self,
        caller: &Caller,
        id: &DatasetId,
        version: &str,
    ) -> Result<DatasetVersion> {
        crate::service::require_name("version", version)?;
        let dataset = self.marquez_dataset(caller, id).await?;
        let wanted = version.trim().to_ascii_lowercase();
        for (run, job, at, named) in self.version_runs(caller, &dataset).await? {
            if version_id(&named, &run.run_id) == wanted {
                return self.version_of(&dataset, run, &job, at, &named).await;
            }
        }
        Err(Error::NotFound(format!("version {version:?} of dataset {:?} not found", id.name)))
    }

    /// The id of a dataset's latest version (`currentVersion`), if it has one.
    pub async fn marquez_current_version(&self, caller: &Caller, dataset: &Dataset) -> Result<Option<String>> {
        Ok(self.version_runs(caller, dataset).await?.first().map(|(run, _, _, named)| version_id(named, &run.run_id)))
    }

    /// The runs that made a version of the dataset, with their job, when, and the name the run
    /// gave it (a version's id is named by it, as the run's `outputDatasetVersions` name it),
    /// the latest first.
    async fn version_runs(&self, caller: &Caller, dataset: &Dataset) -> Result<Vec<VersionRun>> {
        let end = match &dataset.node {
            DatasetNode::Container { container, .. } => End::Container { id: container.id },
            DatasetNode::External { fqn } => End::External { fqn: fqn.clone() },
        };
        let job_ids: Vec<Id> = self
            .store
            .jobs_of_ends(std::slice::from_ref(&end))
            .await?
            .into_iter()
            .map(|(j, _)| j)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if job_ids.is_empty() {
            return Ok(Vec::new());
        }
        let views = self.job_views(caller, self.store.jobs_by_ids(&job_ids).await?).await?;
        let mut written = Vec::new();
        let mut first_read: Option<VersionRun> = None;
        for job in views.into_iter().filter(|v| !v.restricted).map(|v| v.job) {
            let mut page = PageRequest { page: 1, size: MAX_PAGE_SIZE };
            loop {
                let p = self.store.runs_of_job(job.id, &RunFilter::default(), page).await?;
                let n = p.items.len() as i64;
                let ids: Vec<Id> = p.items.iter().map(|r| r.id).collect();
                let io = if ids.is_empty() { Vec::new() } else { self.store.run_io(&ids).await? };
                let by_id: HashMap<Id, &Run> = p.items.iter().map(|r| (r.id, r)).collect();
                for (run, e) in io.iter().filter(|(_, e)| e.end == end) {
                    let Some(r) = by_id.get(run) else { continue };
                    let named = DatasetId { namespace: e.namespace.clone(), name: e.name.clone() };
                    let item = ((*r).clone(), job.clone(), e.at, named);
                    match e.direction {
                        IoDirection::Wrote => written.push(item),
                        IoDirection::Read => {
                            if first_read.as_ref().is_none_or(|(_, _, at, _)| e.at < *at) {
                                first_read = Some(item);
                            }
                        }
                    }
                }
                if n < page.size {
                    break;
                }
                page.page += 1;
            }
        }
        if written.is_empty() {
            written.extend(first_read);
        }
        written.sort_by(|a, b| (b.2, &b.0.run_id).cmp(&(a.2, &a.0.run_id)));
        Ok(written)
    }

    /// A version: the dataset's schema facet in the run's latest event that sent one for it.
    async fn version_of(
        &self,
        dataset: &Dataset,
        run: Run,
        job: &Job,
        at: Timestamp,
        named: &DatasetId,
    ) -> Result<DatasetVersion> {
        let filter = EventFilter { run_id: Some(run.run_id.clone()), ..Default::default() };
        let events = self.store.list_events(&filter, PageRequest { page: 1, size: MAX_PAGE_SIZE }).await?.items;
        let mut facets = serde_json::Value::Object(Default::default());
        let mut fields = Vec::new();
        let folded = normalize_namespace(&named.namespace);
        // Newest first: the first event naming the dataset with a schema facet wins.
        'events: for e in &events {
            for side in ["outputs", "inputs"] {
                for d in e.body.get(side).and_then(|v| v.as_array()).into_iter().flatten() {
                    let same = d.get("name").and_then(|v| v.as_str()) == Some(named.name.as_str())
                        && d.get("namespace").and_then(|v| v.as_str()).map(normalize_namespace).as_deref()
                            == Some(folded.as_str());
                    if !same {
                        continue;
                    }
                    let these = d.get("facets").cloned().unwrap_or(serde_json::Value::Null);
                    let schema = these.pointer("/schema/fields").and_then(|v| v.as_array());
                    if facets.as_object().is_some_and(|m| m.is_empty()) && these.is_object() {
                        facets = these.clone();
                    }
                    if let Some(list) = schema {
                        facets = these.clone();
                        let text =
                            |f: &serde_json::Value, k: &str| f.get(k).and_then(|v| v.as_str()).map(str::to_string);
                        fields = list
                            .iter()
                            .filter_map(|f| Some((text(f, "name")?, text(f, "type"), text(f, "description"))))
                            .collect();
                        break 'events;
                    }
                }
            }
        }
        let mut runs = self.with_io(vec![run], job).await?;
        let run = runs.pop().ok_or_else(|| Error::Internal("a run vanished while read".into()))?;
        Ok(DatasetVersion {
            version: version_id(named, &run.run.run_id),
            dataset: dataset.clone(),
            created_at: at,
            fields,
            facets,
            run,
        })
    }
}

/// The names of a `tags` metadata value: plain names, or OpenLineage tags as `key=value`.
pub(super) fn tag_names(v: &serde_json::Value) -> Vec<String> {
    let name = |s: &serde_json::Value| match s {
        serde_json::Value::String(t) => Some(t.clone()),
        serde_json::Value::Object(o) => match (o.get("key").and_then(|k| k.as_str()), o.get("name")) {
            (Some(k), _) => Some(format!("{k}={}", o.get("value").and_then(|v| v.as_str()).unwrap_or(""))),
            (None, Some(n)) => n.as_str().map(str::to_string),
            _ => None,
        },
        _ => None,
    };
    v.as_array().map(|a| a.iter().filter_map(name).collect()).unwrap_or_default()
}
