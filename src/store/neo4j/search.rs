//! Search on Neo4j (`service::search`): containers by qualified name, fields by `table.column`,
//! external assets by fqn; each one auto-commit read that scans and ranks (exact, then prefix,
//! then the rest), as the embedded store's `search.rs` does.

use super::rows::{ContainerProps, FieldProps};
use super::{distinct, Cmd, Run};
use crate::domain::{Container, Field, Id};
use crate::store::StoreResult;

pub(super) async fn search_containers(
    mut db: impl Run,
    needle: &str,
    datastores: Option<&[Id]>,
    limit: usize,
) -> StoreResult<Vec<Container>> {
    if datastores.is_some_and(|d| d.is_empty()) {
        return Ok(Vec::new());
    }
    db.run(
        cypher!("search_containers")
            .param("needle", needle.to_string())
            .param("datastore_ids", datastores.map(distinct))
            .param("limit", limit as i64),
    )
    .await?
    .decode::<ContainerProps>("container")
}

pub(super) async fn search_fields(
    mut db: impl Run,
    needle: &str,
    datastores: Option<&[Id]>,
    limit: usize,
) -> StoreResult<Vec<Field>> {
    if datastores.is_some_and(|d| d.is_empty()) {
        return Ok(Vec::new());
    }
    db.run(
        cypher!("search_fields")
            .param("needle", needle.to_string())
            .param("datastore_ids", datastores.map(distinct))
            .param("limit", limit as i64),
    )
    .await?
    .decode::<FieldProps>("field")
}

pub(super) async fn search_externals(
    mut db: impl Run,
    needle: &str,
    limit: usize,
) -> StoreResult<Vec<(String, String)>> {
    let rows =
        db.run(cypher!("search_externals").param("needle", needle.to_string()).param("limit", limit as i64)).await?;
    let (fqns, types) = (rows.column::<String>("fqn")?, rows.column::<String>("source_type")?);
    Ok(fqns.into_iter().zip(types).collect())
}
