//! Edges by hand: create, update, delete (retiring a provider's edge instead) and list, each
//! checked against the caller's EDITOR permission on the datastores the edge touches and the
//! granularity and source-type rules of `domain::rules`.

use super::{
    container_not_found, edge_not_found, field_not_found, not_a_user_source_type, Caller, CreateEdge, Lineage,
};
use crate::auth::Permission;
use crate::domain::rules::{self, check_granularity, is_user_source_type};
use crate::domain::{Edge, EdgeFilter, EdgePatch, End, Id, NewEdge, Page, PageRequest};
use crate::error::{Error, Result};

impl Lineage {
    pub(super) async fn container_end(&self, id: Id) -> Result<End> {
        match self.store.containers_by_ids(&[id]).await?.pop() {
            Some(c) => Ok(End::Container { id: c.id }),
            None => Err(container_not_found(id)),
        }
    }

    pub(super) async fn field_end(&self, id: Id) -> Result<End> {
        match self.store.fields_by_ids(&[id]).await?.pop() {
            Some(f) => Ok(End::Field { id: f.id, container_id: f.container_id }),
            None => Err(field_not_found(id)),
        }
    }

    pub async fn create_edge(&self, caller: &Caller, input: CreateEdge) -> Result<Edge> {
        let is_field = check_granularity(
            input.source_container_id,
            input.source_field_id,
            input.target_container_id,
            input.target_field_id,
        )
        .map_err(Error::BadInput)?;
        let source_type = input.source_type.unwrap_or_else(|| "manual".to_string());
        if !is_user_source_type(&source_type) {
            return Err(not_a_user_source_type(&source_type));
        }
        let (source, target) = if is_field {
            (
                self.field_end(input.source_field_id.unwrap_or_default()).await?,
                self.field_end(input.target_field_id.unwrap_or_default()).await?,
            )
        } else {
            (
                self.container_end(input.source_container_id.unwrap_or_default()).await?,
                self.container_end(input.target_container_id.unwrap_or_default()).await?,
            )
        };
        if source == target {
            return Err(Error::BadInput("source and target must be different".into()));
        }
        if input.derived.is_some() && !is_field {
            return Err(Error::BadInput(
                "derived applies to field edges (a column's value transformed); omit it for a container edge".into(),
            ));
        }
        caller.require(self.datastores_of_ends([&source, &target]).await?, Permission::Editor, "createEdge")?;
        let mut edges = vec![NewEdge {
            source: source.clone(),
            target: target.clone(),
            description: input.description,
            source_type: source_type.clone(),
            operation: None,
            derived: input.derived,
            transformations: None,
            last_asserted_at: None,
        }];
        if let (End::Field { container_id: sc, .. }, End::Field { container_id: tc, .. }) = (&source, &target) {
            if rules::wants_auto_container_edge(&source_type, *sc, *tc)
                && !self.store.live_container_edge_exists(*sc, *tc).await?
            {
                edges.push(NewEdge {
                    source: End::Container { id: *sc },
                    target: End::Container { id: *tc },
                    description: None,
                    source_type: "manual".into(),
                    operation: None,
                    derived: None,
                    transformations: None,
                    last_asserted_at: None,
                });
            }
        }
        let created = self.store.create_edges(edges, false, crate::domain::now()).await?;
        created.into_iter().next().ok_or_else(|| Error::Internal("edge creation returned nothing".into()))
    }

    /// An edge the caller may change: EDITOR on the datastores of both its ends.
    pub(super) async fn editable_edge(&self, caller: &Caller, id: Id, operation: &str) -> Result<Edge> {
        let edge = self.store.edges_by_ids(&[id]).await?.pop().ok_or_else(|| edge_not_found(id))?;
        caller.require(self.datastores_of_ends([&edge.source, &edge.target]).await?, Permission::Editor, operation)?;
        Ok(edge)
    }

    pub async fn update_edge(&self, caller: &Caller, id: Id, patch: EdgePatch) -> Result<Edge> {
        let edge = self.editable_edge(caller, id, "updateEdge").await?;
        if let Some(st) = &patch.source_type {
            if !is_user_source_type(st) {
                return Err(not_a_user_source_type(st));
            }
            if !is_user_source_type(&edge.source_type) && st != &edge.source_type {
                return Err(Error::BadInput(format!(
                    "The sourceType of edge {id} is maintained by its provider ({}) and cannot be changed",
                    edge.source_type
                )));
            }
        }
        self.store.update_edge(id, patch).await?.ok_or_else(|| edge_not_found(id))
    }

    pub async fn delete_edge(&self, caller: &Caller, id: Id) -> Result<bool> {
        let edge = self.editable_edge(caller, id, "deleteEdge").await?;
        self.remove_edges(vec![edge]).await?;
        Ok(true)
    }

    pub async fn list_edges(&self, filter: EdgeFilter, page: PageRequest) -> Result<Page<Edge>> {
        Ok(self.store.list_edges(&filter, page).await?)
    }
}
