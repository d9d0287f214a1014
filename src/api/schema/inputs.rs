//! The input objects the mutations take.

use async_graphql::{InputObject, MaybeUndefined};

use super::DatastorePermission;
use crate::domain::Id;

#[derive(InputObject)]
pub struct DatastoreInput {
    /// The key: an existing datastore of this name is updated.
    pub name: String,
    #[graphql(name = "type")]
    pub kind: String,
    pub store_type: Option<String>,
    #[graphql(default)]
    pub namespaces: Vec<String>,
    #[graphql(default)]
    pub enrichment_only: bool,
}

#[derive(InputObject)]
pub struct FieldInput {
    pub name: String,
    #[graphql(name = "type")]
    pub data_type: Option<String>,
    pub display_name: Option<String>,
    pub status: Option<String>,
    pub latest_profile_id: Option<i64>,
    pub is_computed_field: Option<bool>,
    pub active_anomaly_count: Option<i64>,
}

#[derive(InputObject)]
pub struct ContainerInput {
    pub datastore_id: Id,
    pub name: String,
    pub database: Option<String>,
    pub schema: Option<String>,
    pub container_type: Option<String>,
    pub table_type: Option<String>,
    pub display_name: Option<String>,
    pub purpose: Option<String>,
    pub active_anomaly_count: Option<i64>,
    #[graphql(default)]
    pub fields: Vec<FieldInput>,
    /// Your own description; it wins over any source's (see `metadataAssertions`).
    pub description: Option<String>,
    /// Your own tags; they win over any source's.
    pub tags: Option<Vec<String>>,
    /// Your own owners; they win over any source's.
    pub owners: Option<Vec<String>>,
}

#[derive(InputObject)]
pub struct CreateEdgeInput {
    pub source_container_id: Option<Id>,
    pub source_field_id: Option<Id>,
    pub target_container_id: Option<Id>,
    pub target_field_id: Option<Id>,
    pub description: Option<String>,
    /// `manual` (default), `catalog_import` or `inferred`.
    pub source_type: Option<String>,
    /// Field edges: the value passes through a transformation (`sum(amount)`, `upper(email)`)
    /// rather than being copied. Default: not said (null), shown as a copy.
    pub derived: Option<bool>,
}

#[derive(InputObject)]
pub struct UpdateEdgeInput {
    /// Omit to keep, null to clear.
    pub description: MaybeUndefined<String>,
    pub source_type: Option<String>,
}

#[derive(InputObject)]
pub struct TeamInput {
    /// The key: an existing team of this name is replaced.
    pub name: String,
    #[graphql(default)]
    pub members: Vec<String>,
    #[graphql(default)]
    pub permissions: Vec<DatastorePermission>,
}

/// The job a batch of SQL statements belongs to (`ingestSql(job:)`): recorded with a COMPLETE
/// run that read the statements' sources and wrote their targets.
#[derive(InputObject)]
pub struct SqlJobInput {
    pub namespace: String,
    pub name: String,
    /// The run's id (a new UUID when not given).
    pub run_id: Option<String>,
}
