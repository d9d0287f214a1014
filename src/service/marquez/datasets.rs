//! Marquez's namespaces and datasets: the names containers go by, their metadata and times.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::*;

impl Lineage {
    /// The names of containers (see the module's notes), with when events first and last
    /// touched each and when a complete run last wrote it.
    pub(super) async fn container_names(
        &self,
        containers: &[Container],
        datastores: &HashMap<Id, Datastore>,
    ) -> Result<HashMap<Id, (DatasetId, Option<Timestamp>, Option<Timestamp>, Option<Timestamp>)>> {
        let mut out = HashMap::new();
        let mut rows = Vec::new();
        for chunk in containers.chunks(MAX_PAGE_SIZE as usize) {
            let ends: Vec<End> = chunk.iter().map(|c| End::Container { id: c.id }).collect();
            rows.extend(self.store.jobs_of_ends(&ends).await?);
        }
        let mut latest: HashMap<Id, &IoEntry> = HashMap::new();
        let mut times: HashMap<Id, (Timestamp, Timestamp, Option<Timestamp>)> = HashMap::new();
        for (_, e) in &rows {
            let Some(c) = e.end.container_id() else { continue };
            if latest.get(&c).is_none_or(|l| e.at > l.at) {
                latest.insert(c, e);
            }
            let t = times.entry(c).or_insert((e.at, e.at, None));
            t.0 = t.0.min(e.at);
            t.1 = t.1.max(e.at);
            if let Some((_, done)) = e.completed {
                t.2 = Some(t.2.map_or(done, |d| d.max(done)));
            }
        }
        for c in containers {
            let id = match latest.get(&c.id) {
                Some(e) => DatasetId { namespace: e.namespace.clone(), name: e.name.clone() },
                None => DatasetId {
                    namespace: datastores
                        .get(&c.datastore_id)
                        .map(crate::service::sql::namespace_of)
                        .unwrap_or_else(|| format!("datastore-{}", c.datastore_id)),
                    name: crate::domain::container_key(c.database.as_deref(), c.schema.as_deref(), &c.name),
                },
            };
            let t = times.get(&c.id);
            out.insert(c.id, (id, t.map(|t| t.0), t.map(|t| t.1), t.and_then(|t| t.2)));
        }
        Ok(out)
    }

    pub(super) async fn datastore_map(&self) -> Result<HashMap<Id, Datastore>> {
        Ok(self.store.list_datastores().await?.into_iter().map(|d| (d.id, d)).collect())
    }

    /// Containers made into Marquez datasets: fields, metadata (when the caller may read it,
    /// the rule of `metadataAssertions`), names and times.
    pub(super) async fn datasets_of_containers(
        &self,
        caller: &Caller,
        containers: Vec<Container>,
        datastores: &HashMap<Id, Datastore>,
    ) -> Result<Vec<Dataset>> {
        let names = self.container_names(&containers, datastores).await?;
        let ids: Vec<Id> = containers.iter().map(|c| c.id).collect();
        let mut fields: HashMap<Id, Vec<Field>> = HashMap::new();
        for chunk in ids.chunks(MAX_PAGE_SIZE as usize) {
            for f in self.store.fields_of_containers(chunk).await? {
                fields.entry(f.container_id).or_default().push(f);
            }
        }
        let mut out = Vec::new();
        for c in containers {
            let (id, created_at, updated_at, last_modified_at) = names
                .get(&c.id)
                .cloned()
                .unwrap_or_else(|| (DatasetId { namespace: String::new(), name: c.name.clone() }, None, None, None));
            let node = DatasetNode::Container {
                datastore: datastores.get(&c.datastore_id).cloned().map(Box::new),
                container: Box::new(c),
            };
            let mut d = Dataset { created_at, updated_at, last_modified_at, ..Dataset::bare(id, node) };
            if let DatasetNode::Container { container, .. } = &d.node {
                d.fields = fields.remove(&container.id).unwrap_or_default();
            }
            self.add_metadata(caller, &mut d).await?;
            out.push(d);
        }
        self.fill_container_times(&mut out).await?;
        Ok(out)
    }

    /// Times for containers no event read or wrote (a table named only by column lineage, one
    /// only catalogued): from the edges on it and its fields (first made, last asserted), else
    /// when it was created (the change log's `CONTAINER_CREATED`). Marquez always sends both.
    async fn fill_container_times(&self, datasets: &mut [Dataset]) -> Result<()> {
        let bare: Vec<(Id, Vec<Id>)> = datasets
            .iter()
            .filter(|d| d.created_at.is_none())
            .filter_map(|d| match &d.node {
                DatasetNode::Container { container, .. } => {
                    Some((container.id, d.fields.iter().map(|f| f.id).collect()))
                }
                DatasetNode::External { .. } => None,
            })
            .collect();
        if bare.is_empty() {
            return Ok(());
        }
        let mut times: HashMap<Id, (Timestamp, Timestamp)> = HashMap::new();
        let mut note = |c: Id, e: &crate::domain::Edge| {
            let last = e.last_asserted_at.unwrap_or(e.created).max(e.created);
            let t = times.entry(c).or_insert((e.created, last));
            t.0 = t.0.min(e.created);
            t.1 = t.1.max(last);
        };
        let containers: Vec<Id> = bare.iter().map(|(c, _)| *c).collect();
        let field_of: HashMap<Id, Id> = bare.iter().flat_map(|(c, fs)| fs.iter().map(move |f| (*f, *c))).collect();
        for chunk in containers.chunks(MAX_PAGE_SIZE as usize) {
            for e in self.store.edges_touching_containers(chunk).await? {
                for end in [&e.source, &e.target] {
                    if let Some(c) = end.container_id().filter(|c| chunk.contains(c)) {
                        note(c, &e);
                    }
                }
            }
        }
        let fields: Vec<Id> = field_of.keys().copied().collect();
        for chunk in fields.chunks(MAX_PAGE_SIZE as usize) {
            for e in self.store.edges_touching_fields(chunk).await? {
                for end in [&e.source, &e.target] {
                    if let End::Field { id, .. } = end {
                        if let Some(c) = field_of.get(id) {
                            note(*c, &e);
                        }
                    }
                }
            }
        }
        for d in datasets.iter_mut().filter(|d| d.created_at.is_none()) {
            let DatasetNode::Container { container, .. } = &d.node else { continue };
            let (created, updated) = match times.get(&container.id) {
                Some(t) => (Some(t.0), Some(t.1)),
                None => {
                    let first = self.store.changes_after(0, 1, Some(container.id)).await?.pop().map(|c| c.change.at);
                    (first, first)
                }
            };
            d.created_at = created;
            d.updated_at = updated;
        }
        Ok(())
    }

    pub(super) async fn add_metadata(&self, caller: &Caller, d: &mut Dataset) -> Result<()> {
        let DatasetNode::Container { container, .. } = &d.node else { return Ok(()) };
        if !caller.has(container.datastore_id, Permission::Reporter) {
            return Ok(());
        }
        let rows = self.store.metadata_for_container(container.id).await?;
        let flags = crate::domain::effective_flags(&rows);
        // A tag is a name (`pii`) or an OpenLineage tag (named `key=value`, as the global tags
        // it creates); an owner a name or `{"name", "type"}` (`tag_names` reads both).
        let strings = super::catalog::tag_names;
        for (row, shown) in rows.iter().zip(flags) {
            if !shown {
                continue;
            }
            let text = row.value.as_str().map(str::to_string);
            match (row.field_id, row.attribute.as_str()) {
                (None, "description") => d.description = text,
                (None, "tags") => d.tags = strings(&row.value),
                (None, "owners") => d.owners = strings(&row.value),
                (Some(f), "description") => d.field_meta.entry(f).or_default().0 = text,
                (Some(f), "tags") => d.field_meta.entry(f).or_default().1 = strings(&row.value),
                _ => {}
            }
        }
        Ok(())
    }

    /// An asset outside the catalog, with the times of the io rows naming it, else of the
    /// OpenLineage edges on it (one named only by column lineage).
    pub(super) async fn external_dataset(&self, id: DatasetId, fqn: String, rows: &[&IoEntry]) -> Result<Dataset> {
        let mut d = Dataset {
            created_at: rows.iter().map(|e| e.at).min(),
            updated_at: rows.iter().map(|e| e.at).max(),
            last_modified_at: rows.iter().filter_map(|e| e.completed.map(|(_, t)| t)).max(),
            ..Dataset::bare(id, DatasetNode::External { fqn: fqn.clone() })
        };
        if d.created_at.is_none() && !fqn.is_empty() {
            let edges = self
                .store
                .live_edges_touching_ends(&[End::External { fqn }], crate::service::openlineage::SOURCE_TYPE)
                .await?;
            d.created_at = edges.iter().map(|e| e.created).min();
            d.updated_at = edges.iter().map(|e| e.last_asserted_at.unwrap_or(e.created)).max();
        }
        Ok(d)
    }

    /// Every namespace, by name.
    pub async fn marquez_namespaces(&self, caller: &Caller) -> Result<Vec<Namespace>> {
        let scan = self.scan(caller).await?;
        self.namespaces_of(&scan).await
    }

    pub(super) async fn namespaces_of(&self, scan: &Scan) -> Result<Vec<Namespace>> {
        let mut out: BTreeMap<String, Namespace> = BTreeMap::new();
        let mut note = |name: &str, at: Option<(Timestamp, Timestamp)>| {
            let n = out.entry(name.to_string()).or_insert_with(|| Namespace {
                name: name.to_string(),
                created_at: None,
                updated_at: None,
            });
            if let Some((first, last)) = at {
                n.created_at = Some(n.created_at.map_or(first, |c| c.min(first)));
                n.updated_at = Some(n.updated_at.map_or(last, |u| u.max(last)));
            }
        };
        for j in scan.jobs.iter().filter(|j| scan.visible.contains(&j.id)) {
            note(&j.namespace, Some((j.first_seen_at, j.last_seen_at)));
        }
        for (_, e) in &scan.io {
            note(&e.namespace, Some((e.at, e.at)));
        }
        for d in self.store.list_datastores().await? {
            note(&crate::service::sql::namespace_of(&d), None);
            for n in &d.namespaces {
                note(n, None);
            }
        }
        Ok(out.into_values().collect())
    }

    /// One namespace, or NOT_FOUND.
    pub async fn marquez_namespace(&self, caller: &Caller, name: &str) -> Result<Namespace> {
        crate::service::require_name("namespace", name)?;
        self.marquez_namespaces(caller)
            .await?
            .into_iter()
            .find(|n| n.name == name)
            .ok_or_else(|| Error::NotFound(format!("namespace {name:?} not found")))
    }

    /// The datasets of a namespace, by name (the whole list: the caller pages it).
    pub async fn marquez_datasets(&self, caller: &Caller, namespace: &str) -> Result<Vec<Dataset>> {
        crate::service::require_name("namespace", namespace)?;
        let scan = self.scan(caller).await?;
        if !self.namespaces_of(&scan).await?.iter().any(|n| n.name == namespace) {
            return Err(Error::NotFound(format!("namespace {namespace:?} not found")));
        }
        let datastores = self.datastore_map().await?;
        let folded = crate::ingest::openlineage::naming::normalize_namespace(namespace);
        let mut containers: BTreeMap<Id, Container> = BTreeMap::new();
        for d in datastores.values().filter(|d| {
            crate::service::sql::namespace_of(d) == namespace
                || d.namespaces.iter().any(|n| crate::ingest::openlineage::naming::normalize_namespace(n) == folded)
        }) {
            let mut page = PageRequest { page: 1, size: MAX_PAGE_SIZE };
            loop {
                let p = self.store.list_containers(Some(d.id), None, page).await?;
                let n = p.items.len() as i64;
                containers.extend(p.items.into_iter().map(|c| (c.id, c)));
                if n < page.size {
                    break;
                }
                page.page += 1;
            }
        }
        // Containers elsewhere that an event named in this namespace (an alias, a symlink).
        let named_here: Vec<Id> = scan
            .io
            .iter()
            .filter(|(_, e)| e.namespace == namespace)
            .filter_map(|(_, e)| e.end.container_id())
            .filter(|c| !containers.contains_key(c))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        for chunk in named_here.chunks(MAX_PAGE_SIZE as usize) {
            containers.extend(self.store.containers_by_ids(chunk).await?.into_iter().map(|c| (c.id, c)));
        }
        let mut out: Vec<Dataset> = self
            .datasets_of_containers(caller, containers.into_values().collect(), &datastores)
            .await?
            .into_iter()
            .filter(|d| d.id.namespace == namespace)
            .collect();
        let mut externals: BTreeMap<(String, String), Vec<&IoEntry>> = BTreeMap::new();
        for (_, e) in scan.io.iter().filter(|(_, e)| e.namespace == namespace) {
            if let End::External { fqn } = &e.end {
                externals.entry((e.name.clone(), fqn.clone())).or_default().push(e);
            }
        }
        for ((name, fqn), rows) in externals {
            let id = DatasetId { namespace: namespace.to_string(), name };
            if !out.iter().any(|d| d.id == id) {
                out.push(self.external_dataset(id, fqn, &rows).await?);
            }
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }

    /// What an OpenLineage identity denotes now: its container, or the external asset lineage
    /// or a job's datasets name (an asset read and written only by jobs has no edge of its own).
    pub(super) async fn find_dataset(&self, id: &DatasetId) -> Result<Option<std::result::Result<Container, String>>> {
        match self.dataset_node(&id.namespace, &id.name).await? {
            Some(Ok(c)) => return Ok(Some(Ok(c))),
            Some(Err(x)) => return Ok(Some(Err(x.fqn))),
            None => {}
        }
        let folded = crate::ingest::openlineage::naming::normalize_namespace(&id.namespace);
        let mut fqns = vec![
            crate::service::openlineage::external_fqn(id.namespace.trim(), id.name.trim()),
            crate::service::openlineage::external_fqn(&folded, id.name.trim()),
        ];
        fqns.dedup();
        for fqn in fqns {
            if !self.store.jobs_of_ends(&[End::External { fqn: fqn.clone() }]).await?.is_empty() {
                return Ok(Some(Err(fqn)));
            }
        }
        Ok(None)
    }

    /// The dataset an OpenLineage identity denotes now, or NOT_FOUND.
    pub async fn marquez_dataset(&self, caller: &Caller, id: &DatasetId) -> Result<Dataset> {
        let not_found = || Error::NotFound(format!("dataset {:?} in namespace {:?} not found", id.name, id.namespace));
        match self.find_dataset(id).await? {
            Some(Ok(c)) => {
                let datastores = self.datastore_map().await?;
                let mut d =
                    self.datasets_of_containers(caller, vec![c], &datastores).await?.pop().ok_or_else(not_found)?;
                // Asked by a name that denotes it: answer under that name, as Marquez would.
                d.id = id.clone();
                Ok(d)
            }
            Some(Err(fqn)) => {
                let rows = self.store.jobs_of_ends(&[End::External { fqn: fqn.clone() }]).await?;
                let rows: Vec<&IoEntry> = rows.iter().map(|(_, e)| e).collect();
                self.external_dataset(id.clone(), fqn, &rows).await
            }
            None => Err(not_found()),
        }
    }
}
