//! The catalog's resolvers: `Datastore`, `Container` and `Field` (defined in `types.rs`, which
//! other files name them from) and `MetadataAssertion`. The loader reads that other types'
//! resolvers use to reach them are in `shared.rs`.

use async_graphql::{Context, Json, Object};

use super::scalars::{dt, DateTime};
use super::shared::{field_count, healths, jobs_of, last_write, load_container, load_datastore, stats};
use super::{caller, lineage, loaders, paged, Container, Datastore, Field, FieldPage, GqlResult, Page};
use crate::domain::{self, Id};
use crate::error::Error;
use crate::service;

#[Object]
impl Datastore {
    async fn id(&self) -> Id {
        self.0.id
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    /// The datastore type (`snowflake`, `postgresql`, ...).
    #[graphql(name = "type")]
    async fn kind(&self) -> &str {
        &self.0.kind
    }
    async fn store_type(&self) -> Option<&str> {
        self.0.store_type.as_deref()
    }
    /// OpenLineage namespaces whose datasets resolve to this datastore.
    async fn namespaces(&self) -> &[String] {
        &self.0.namespaces
    }
    async fn enrichment_only(&self) -> bool {
        self.0.enrichment_only
    }
}

#[Object]
impl Container {
    async fn id(&self) -> Id {
        self.0.id
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn display_name(&self) -> Option<&str> {
        self.0.display_name.as_deref()
    }
    async fn container_type(&self) -> &str {
        &self.0.container_type
    }
    async fn table_type(&self) -> Option<&str> {
        self.0.table_type.as_deref()
    }
    async fn database(&self) -> Option<&str> {
        self.0.database.as_deref()
    }
    async fn schema(&self) -> Option<&str> {
        self.0.schema.as_deref()
    }
    /// `database.schema.name` (the parts it has), as `search` answers it; every argument and
    /// route that takes a table by name takes it.
    async fn qualified_name(&self) -> String {
        domain::container_key(self.0.database.as_deref(), self.0.schema.as_deref(), &self.0.name)
    }
    /// `<datastore>:<database.schema.name>`: the name no other container shares (the same table
    /// in prod and staging), ready to give to any argument or route that takes a table by name.
    async fn unique_name(&self, ctx: &Context<'_>) -> GqlResult<Option<String>> {
        let ds = load_datastore(ctx, self.0.datastore_id).await?;
        Ok(ds.map(|d| service::tables::unique_name(&d.0.name, &self.0)))
    }
    async fn datastore_id(&self) -> Id {
        self.0.datastore_id
    }
    async fn datastore_name(&self, ctx: &Context<'_>) -> GqlResult<Option<String>> {
        Ok(load_datastore(ctx, self.0.datastore_id).await?.map(|d| d.0.name))
    }
    async fn datastore(&self, ctx: &Context<'_>) -> GqlResult<Option<Datastore>> {
        load_datastore(ctx, self.0.datastore_id).await
    }
    async fn field_count(&self, ctx: &Context<'_>) -> GqlResult<i64> {
        field_count(ctx, self.0.id).await
    }
    async fn linked_field_count(&self, ctx: &Context<'_>) -> GqlResult<i64> {
        Ok(stats(ctx, self.0.id).await?.1)
    }
    async fn purpose(&self) -> Option<&str> {
        self.0.purpose.as_deref()
    }
    async fn active_anomaly_count(&self) -> i64 {
        self.0.active_anomaly_count
    }
    /// The effective description: the user's own (`upsertContainer`) when set, otherwise the
    /// most recently asserted (OpenLineage's `documentation` facet, a catalog). Null when none,
    /// or when the caller lacks REPORTER on the datastore (as `metadataAssertions` is refused).
    async fn description(&self, ctx: &Context<'_>) -> GqlResult<Option<String>> {
        Ok(effective_metadata(ctx, &self.0).await?.and_then(|m| m.description))
    }
    /// The effective owners' names (same rule as `description`); empty when none, null when
    /// the caller lacks REPORTER on the datastore.
    async fn owners(&self, ctx: &Context<'_>) -> GqlResult<Option<Vec<String>>> {
        Ok(effective_metadata(ctx, &self.0).await?.map(|m| m.owners))
    }
    /// The effective tags (same rule as `description`); empty when none, null when the caller
    /// lacks REPORTER on the datastore.
    async fn tags(&self, ctx: &Context<'_>) -> GqlResult<Option<Vec<String>>> {
        Ok(effective_metadata(ctx, &self.0).await?.map(|m| m.tags))
    }
    /// The container's fields, paged.
    #[graphql(complexity = "paged(size, child_complexity)")]
    async fn fields(
        &self,
        ctx: &Context<'_>,
        name: Option<String>,
        #[graphql(default_with = "Some(1)")] page: Option<i64>,
        #[graphql(default_with = "Some(50)")] size: Option<i64>,
    ) -> GqlResult<FieldPage> {
        let page = service::validate_page(page.unwrap_or(1), size.unwrap_or(50))?;
        Ok(Page::new(lineage(ctx).container_fields(self.0.id, name.as_deref(), page).await?, Field))
    }
    /// The jobs that write it (OpenLineage outputs), each with its latest run.
    async fn producers(&self, ctx: &Context<'_>) -> GqlResult<Vec<super::Job>> {
        jobs_of(ctx, self.0.id, domain::IoDirection::Wrote).await
    }
    /// The jobs that read it (OpenLineage inputs), each with its latest run.
    async fn consumers(&self, ctx: &Context<'_>) -> GqlResult<Vec<super::Job>> {
        jobs_of(ctx, self.0.id, domain::IoDirection::Read).await
    }
    /// The latest COMPLETE run that wrote it, and when it ended.
    async fn last_write(&self, ctx: &Context<'_>) -> GqlResult<Option<super::LastWrite>> {
        last_write(ctx, self.0.id).await
    }
    /// Whether it is fresh, failed, or stale because a run upstream failed (see `HealthState`).
    async fn health(&self, ctx: &Context<'_>) -> GqlResult<super::ContainerHealth> {
        let mut all = healths(ctx, &[self.0.id], self.1).await?;
        let h = all.remove(&self.0.id).ok_or_else(|| Error::Internal("no health computed".into()))?;
        Ok(super::ContainerHealth(h))
    }
}

/// A container's effective metadata, or `None` when the caller may not read its metadata
/// (REPORTER on its datastore, as `metadataAssertions`).
async fn effective_metadata(ctx: &Context<'_>, c: &domain::Container) -> GqlResult<Option<domain::EffectiveMetadata>> {
    if !caller(ctx).has(c.datastore_id, crate::auth::Permission::Reporter) {
        return Ok(None);
    }
    let rows = loaders(ctx).metadata.loader.load_one(c.id).await.map_err(Error::from)?.unwrap_or_default();
    Ok(Some(domain::effective_container_metadata(&rows)))
}

#[Object]
impl Field {
    async fn id(&self) -> Id {
        self.0.id
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn display_name(&self) -> Option<&str> {
        self.0.display_name.as_deref()
    }
    #[graphql(name = "type")]
    async fn data_type(&self) -> Option<&str> {
        self.0.data_type.as_deref()
    }
    async fn status(&self) -> &str {
        &self.0.status
    }
    async fn latest_profile_id(&self) -> Option<i64> {
        self.0.latest_profile_id
    }
    async fn is_computed_field(&self) -> bool {
        self.0.is_computed_field
    }
    async fn active_anomaly_count(&self) -> i64 {
        self.0.active_anomaly_count
    }
    /// Whether the field has any live field-level edge.
    async fn has_lineage(&self, ctx: &Context<'_>) -> GqlResult<bool> {
        Ok(loaders(ctx).has_lineage.load_one(self.0.id).await.map_err(Error::from)?.unwrap_or(false))
    }
    async fn container_id(&self) -> Id {
        self.0.container_id
    }
    async fn container(&self, ctx: &Context<'_>) -> GqlResult<Option<Container>> {
        load_container(ctx, self.0.container_id).await
    }
}

/// One source's current value of a container's or field's metadata.
pub struct MetadataAssertion(pub domain::MetadataAssertion, pub bool);

#[Object]
impl MetadataAssertion {
    /// Set when the value belongs to the container.
    async fn container_id(&self) -> Option<Id> {
        self.0.field_id.is_none().then_some(self.0.container_id)
    }
    /// Set when the value belongs to one of its fields.
    async fn field_id(&self) -> Option<Id> {
        self.0.field_id
    }
    /// `description`, `tags`, `owners` or `type`.
    async fn attribute(&self) -> &str {
        &self.0.attribute
    }
    /// `user`, `sync`, `openlineage` or a data catalog's name.
    async fn source(&self) -> &str {
        &self.0.source
    }
    async fn provider(&self) -> &str {
        &self.0.provider
    }
    async fn value(&self) -> Json<serde_json::Value> {
        Json(self.0.value.clone())
    }
    async fn asserted_at(&self) -> DateTime {
        dt(self.0.asserted_at)
    }
    async fn observed_at(&self) -> DateTime {
        dt(self.0.observed_at)
    }
    async fn details(&self) -> Option<Json<serde_json::Value>> {
        self.0.details.clone().map(Json)
    }
    /// Whether this is the value shown: a user's own wins, otherwise the latest asserted.
    async fn effective(&self) -> bool {
        self.1
    }
}
