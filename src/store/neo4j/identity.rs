//! Small documents on Neo4j: users, API tokens (hashed) and teams, one `:Doc {kind, key}` node
//! each, the JSON value kept as text. The documents mean nothing to the store; the services
//! that own them parse them.

use super::{internal, Cmd, Run};
use crate::store::StoreResult;

pub(super) async fn put_doc(mut db: impl Run, kind: &str, key: &str, value: serde_json::Value) -> StoreResult<()> {
    let cmd = cypher!("put_doc").param("kind", kind).param("key", key).param("value", value.to_string());
    db.run(cmd).await.map(|_| ())
}

pub(super) async fn get_doc(mut db: impl Run, kind: &str, key: &str) -> StoreResult<Option<serde_json::Value>> {
    let rows = db.run(cypher!("get_doc").param("kind", kind).param("key", key)).await?;
    let values: Vec<String> = rows.column("value")?;
    values
        .into_iter()
        .next()
        .map(|v| serde_json::from_str(&v).map_err(|e| internal("get_doc", e.to_string())))
        .transpose()
}

pub(super) async fn list_docs(mut db: impl Run, kind: &str) -> StoreResult<Vec<(String, serde_json::Value)>> {
    let rows = db.run(cypher!("list_docs").param("kind", kind)).await?;
    let (keys, values): (Vec<String>, Vec<String>) = (rows.column("key")?, rows.column("value")?);
    keys.into_iter()
        .zip(values)
        .map(|(k, v)| Ok((k, serde_json::from_str(&v).map_err(|e| internal("list_docs", e.to_string()))?)))
        .collect()
}
