//! The catalog's writes and reads by id: datastores, containers, fields and their metadata
//! assertions (upserts, deletes with the edges they retire or remove, a container's fields).
//! Each checks the caller's permission on the datastore it touches.

use std::collections::HashSet;

use super::{container_not_found, datastore_not_found, field_not_found, require_name, Caller, Lineage, MAX_PAGE_SIZE};
use crate::auth::Permission;
use crate::domain::rules::delete_retires;
use crate::domain::{Container, ContainerInput, Datastore, DatastoreInput, Edge, Field, Id, Page, PageRequest};
use crate::error::{Error, Result};

impl Lineage {
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
    pub(super) async fn remove_edges(&self, edges: Vec<Edge>) -> Result<()> {
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

    /// Every datastore (the catalog is open to every reader).
    pub async fn datastores(&self) -> Result<Vec<Datastore>> {
        Ok(self.store.list_datastores().await?)
    }

    /// A page of containers, in a datastore and/or whose qualified name contains `name`.
    pub async fn containers(
        &self,
        datastore: Option<Id>,
        name: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<Container>> {
        Ok(self.store.list_containers(datastore, name, page).await?)
    }

    /// A container by id; NOT_FOUND when there is none.
    pub async fn container_by_id(&self, id: Id) -> Result<Container> {
        self.store.containers_by_ids(&[id]).await?.pop().ok_or_else(|| container_not_found(id))
    }

    /// A field by id with its container; NOT_FOUND naming the field when either is gone.
    pub async fn field_with_container(&self, id: Id) -> Result<(Container, Field)> {
        let f = self.store.fields_by_ids(&[id]).await?.pop().ok_or_else(|| field_not_found(id))?;
        match self.store.containers_by_ids(&[f.container_id]).await?.pop() {
            Some(c) => Ok((c, f)),
            None => Err(field_not_found(id)),
        }
    }
}
