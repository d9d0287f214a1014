//! The metadata an OpenLineage event carries for its datasets (description, tags, owners,
//! field types and descriptions) as metadata assertions on the containers they resolve to, and
//! the global tags those assertions would create.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::resolve::Resolver;
use super::SOURCE_TYPE;
use crate::domain::Id;
use crate::error::{Error, Result};
use crate::ingest::openlineage::Event;
use crate::service::{Caller, Lineage};

impl Lineage {
    /// Tags the event's metadata uses that no one created yet. Creating a global tag needs the
    /// ADMIN role: otherwise the event is refused alone (seed 000).
    pub(super) async fn new_tags(
        &self,
        caller: &Caller,
        metadata: &[crate::domain::MetadataAssertion],
    ) -> Result<Vec<String>> {
        let used: BTreeSet<String> = metadata
            .iter()
            .filter(|m| m.attribute == "tags")
            .flat_map(|m| m.value.as_array().cloned().unwrap_or_default())
            .filter_map(|t| {
                let key = t.get("key").and_then(Value::as_str)?;
                let value = t.get("value").and_then(Value::as_str).unwrap_or_default();
                Some(format!("{key}={value}"))
            })
            .collect();
        if used.is_empty() {
            return Ok(Vec::new());
        }
        let known: BTreeSet<String> = self.store.list_docs("tag").await?.into_iter().map(|(k, _)| k).collect();
        let new: Vec<String> = used.into_iter().filter(|t| !known.contains(t)).collect();
        if !new.is_empty() && !caller.is_admin() {
            return Err(Error::Forbidden(format!(
                "creating the new tag(s) {} needs the ADMIN role; ask an admin to create them first",
                new.join(", ")
            )));
        }
        Ok(new)
    }

    pub(super) async fn register_tags(&self, tags: Vec<String>) -> Result<()> {
        for t in tags {
            self.store.put_doc("tag", &t, json!({"created": crate::domain::now()})).await?;
        }
        Ok(())
    }

    /// Description, tags, owners and field types of the datasets that resolve to containers.
    pub(super) async fn metadata_of(
        &self,
        resolver: &mut Resolver<'_>,
        event: &Event,
        event_id: Id,
    ) -> Result<Vec<crate::domain::MetadataAssertion>> {
        let observed = crate::domain::now();
        let mut rows = Vec::new();
        for d in event.inputs.iter().chain(&event.outputs).chain(event.dataset.iter()) {
            let has_metadata =
                d.description.is_some() || d.tags.is_some() || d.owners.is_some() || !d.schema.is_empty();
            if !has_metadata {
                continue;
            }
            for c in resolver.containers(d).await? {
                let details = json!({"event_id": event_id, "dataset": {"namespace": d.namespace, "name": d.name}});
                let row = |field_id: Option<Id>, attribute: &str, value: Value| crate::domain::MetadataAssertion {
                    container_id: c.id,
                    field_id,
                    attribute: attribute.to_string(),
                    source: SOURCE_TYPE.to_string(),
                    provider: event.producer.clone(),
                    value,
                    asserted_at: event.event_time,
                    observed_at: observed,
                    details: Some(details.clone()),
                };
                if let Some(text) = &d.description {
                    rows.push(row(None, "description", json!(text)));
                }
                if let Some(owners) = &d.owners {
                    let v: Vec<Value> = owners.iter().map(|o| json!({"name": o.name, "type": o.kind})).collect();
                    rows.push(row(None, "owners", Value::Array(v)));
                }
                if let Some(tags) = &d.tags {
                    let mut by_field: BTreeMap<Option<String>, Vec<Value>> = BTreeMap::new();
                    for t in tags {
                        by_field
                            .entry(t.field.clone())
                            .or_default()
                            .push(json!({"key": t.key, "value": t.value, "source": t.source}));
                    }
                    for (field, list) in by_field {
                        let field_id = match field {
                            None => None,
                            Some(f) => match self.field_id_cached(&mut resolver.fields, c.id, &f).await? {
                                Some(id) => Some(id),
                                None => continue,
                            },
                        };
                        rows.push(row(field_id, "tags", Value::Array(list)));
                    }
                }
                for f in &d.schema {
                    // dbt sends descriptions without types: each is recorded when it is sent.
                    let Some(id) = self.field_id_cached(&mut resolver.fields, c.id, &f.name).await? else { continue };
                    if let Some(t) = &f.data_type {
                        rows.push(row(Some(id), "type", json!(t)));
                    }
                    if let Some(text) = &f.description {
                        rows.push(row(Some(id), "description", json!(text)));
                    }
                }
            }
        }
        Ok(rows)
    }
}
