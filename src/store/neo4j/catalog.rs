//! The catalog on Neo4j: `:Datastore`, `:Container` and `:Field` nodes. Upserts find the node by
//! its unique key (a datastore's name, a container's `<datastore id>/<database.schema.name>`, a
//! field's `<container id>/<name>`) and take new ids from the store's id blocks (`ids`);
//! deletes of containers and fields are soft (see the store's model).

use std::collections::HashSet;

use super::changes::record_in;
use super::rows::{
    container_node_key, list, map, ContainerNameProps, ContainerProps, DatastoreProps, Decode, FieldNameProps,
    FieldProps, Positional,
};
use super::tx::Tx;
use super::{decode_by_ids, distinct, exec, first_id, Cmd, Run, CONTAINER_COUNTER, DATASTORE_COUNTER, FIELD_COUNTER};
use crate::domain::{
    ChangeKind, Container, ContainerInput, Datastore, DatastoreInput, Field, Id, NewChange, Page, PageRequest,
};
use crate::store::{StoreError, StoreResult};

pub(super) async fn upsert_datastore_in(txn: &mut Tx<'_>, input: DatastoreInput) -> StoreResult<Datastore> {
    let existing = exec(txn, cypher!("datastore_id_by_name").param("name", input.name.clone())).await?;
    let new_id = if existing.rows.is_empty() {
        Some(first_id(&txn.allocate(&[(DATASTORE_COUNTER, 1)]).await?, DATASTORE_COUNTER)?)
    } else {
        None
    };
    exec(
        txn,
        cypher!("upsert_datastore")
            .param("name", input.name)
            .param("type", input.kind)
            .param("store_type", input.store_type)
            .param("namespaces", input.namespaces)
            .param("enrichment_only", input.enrichment_only)
            .param("new_id", new_id),
    )
    .await?
    .decode_first::<DatastoreProps>("datastore")
}

pub(super) async fn datastores_by_ids(db: impl Run, ids: &[Id]) -> StoreResult<Vec<Datastore>> {
    decode_by_ids::<DatastoreProps>(db, cypher!("datastores_by_ids"), ids, "datastore").await
}

pub(super) async fn list_datastores(mut db: impl Run) -> StoreResult<Vec<Datastore>> {
    db.run(cypher!("list_datastores")).await?.decode::<DatastoreProps>("datastore")
}

/// Records a `CONTAINER_DROPPED` per live container the datastore took with it.
pub(super) async fn delete_datastore_in(txn: &mut Tx<'_>, id: Id) -> StoreResult<bool> {
    let dropped: Vec<Id> = exec(txn, cypher!("live_containers_of_datastore").param("id", id)).await?.column("id")?;
    let found = deleted(&mut *txn, cypher!("delete_datastore").param("id", id)).await?;
    let now = crate::domain::now();
    let changes: Vec<NewChange> =
        dropped.into_iter().map(|c| NewChange::container(ChangeKind::ContainerDropped, c, now)).collect();
    record_in(txn, &changes).await?;
    Ok(found)
}

pub(super) async fn upsert_container_in(
    txn: &mut Tx<'_>,
    input: ContainerInput,
) -> StoreResult<(Container, Vec<Field>)> {
    let key = container_node_key(input.datastore_id, input.database.as_deref(), input.schema.as_deref(), &input.name);
    let lookup = exec(
        txn,
        cypher!("container_upsert_lookup").param("datastore_id", input.datastore_id).param("key", key.clone()),
    )
    .await?;
    if !lookup.value::<bool>("datastore_exists")? {
        return Err(StoreError::NotFound(format!("Datastore {} not found", input.datastore_id)));
    }
    let container_id: Option<Id> = lookup.value("container_id")?;
    let existing: HashSet<String> = lookup.value::<Vec<String>>("field_names")?.into_iter().collect();

    // New fields (first mention of each new name) get ids; repeated names merge into the first.
    let mut new_names = HashSet::new();
    for field in &input.fields {
        if !existing.contains(&field.name) {
            new_names.insert(field.name.clone());
        }
    }
    let ids = txn
        .allocate(&[(CONTAINER_COUNTER, usize::from(container_id.is_none())), (FIELD_COUNTER, new_names.len())])
        .await?;
    let new_container_id = if container_id.is_none() { Some(first_id(&ids, CONTAINER_COUNTER)?) } else { None };
    let mut next_field_id = if new_names.is_empty() { 0 } else { first_id(&ids, FIELD_COUNTER)? };
    let mut assigned = HashSet::new();
    let mut fields = Vec::with_capacity(input.fields.len());
    for f in input.fields {
        let new_id = if new_names.contains(&f.name) && assigned.insert(f.name.clone()) {
            next_field_id += 1;
            Some(next_field_id - 1)
        } else {
            None
        };
        fields.push(map([
            ("name", f.name.into()),
            ("new_id", new_id.into()),
            ("data_type", f.data_type.into()),
            ("display_name", f.display_name.into()),
            ("status", f.status.into()),
            ("latest_profile_id", f.latest_profile_id.into()),
            ("is_computed_field", f.is_computed_field.into()),
            ("active_anomaly_count", f.active_anomaly_count.into()),
        ]));
    }
    let out = exec(
        txn,
        cypher!("upsert_container")
            .param("key", key)
            .param("new_id", new_container_id)
            .param("datastore_id", input.datastore_id)
            .param("name_lc", input.name.to_lowercase())
            .param("name", input.name)
            .param("database", input.database)
            .param("schema", input.schema)
            .param("container_type", input.container_type)
            .param("table_type", input.table_type)
            .param("display_name", input.display_name)
            .param("purpose", input.purpose)
            .param("active_anomaly_count", input.active_anomaly_count)
            .param("fields", list(fields)),
    )
    .await?;
    let container = out.decode_first::<ContainerProps>("container")?;
    let fields: Vec<FieldProps> = out.value("fields")?;
    let fields: Vec<Field> = fields.into_iter().map(Decode::decode).collect::<StoreResult<_>>()?;
    let now = crate::domain::now();
    let mut changes = Vec::new();
    if let Some(id) = new_container_id {
        changes.push(NewChange::container(ChangeKind::ContainerCreated, id, now));
    }
    let mut recorded = HashSet::new();
    for f in &fields {
        if new_names.contains(&f.name) && recorded.insert(f.id) {
            changes.push(NewChange::field(ChangeKind::FieldCreated, f.id, container.id, now));
        }
    }
    record_in(txn, &changes).await?;
    Ok((container, fields))
}

pub(super) async fn containers_by_ids(db: impl Run, ids: &[Id]) -> StoreResult<Vec<Container>> {
    decode_by_ids::<Positional<ContainerProps>>(db, cypher!("containers_by_ids"), ids, "container").await
}

pub(super) async fn list_containers(
    mut db: impl Run,
    datastore_id: Option<Id>,
    name: Option<&str>,
    page: PageRequest,
) -> StoreResult<Page<Container>> {
    let cmd = match datastore_id {
        Some(datastore_id) => cypher!("list_containers_by_datastore").param("datastore_id", datastore_id),
        None => cypher!("list_containers"),
    };
    db.run(cmd.param("name", name.map(str::to_lowercase)).param("skip", page.offset()).param("limit", page.size))
        .await?
        .page::<ContainerProps>(page)
}

pub(super) async fn containers_by_names(
    mut db: impl Run,
    names: &[String],
    datastores: Option<&[Id]>,
) -> StoreResult<Vec<Container>> {
    if names.is_empty() || datastores.is_some_and(|d| d.is_empty()) {
        return Ok(Vec::new());
    }
    let names: Vec<String> = names.iter().cloned().collect::<HashSet<_>>().into_iter().collect();
    db.run(cypher!("containers_by_names").param("names", names).param("datastore_ids", datastores.map(distinct)))
        .await?
        .decode::<ContainerProps>("container")
}

pub(super) async fn delete_container_in(txn: &mut Tx<'_>, id: Id) -> StoreResult<bool> {
    let found = deleted(&mut *txn, cypher!("delete_container").param("id", id)).await?;
    if found {
        record_in(txn, &[NewChange::container(ChangeKind::ContainerDropped, id, crate::domain::now())]).await?;
    }
    Ok(found)
}

pub(super) async fn fields_by_ids(db: impl Run, ids: &[Id]) -> StoreResult<Vec<Field>> {
    decode_by_ids::<Positional<FieldProps>>(db, cypher!("fields_by_ids"), ids, "field").await
}

pub(super) async fn container_names_by_ids(db: impl Run, ids: &[Id]) -> StoreResult<Vec<(Id, String)>> {
    decode_by_ids::<Positional<ContainerNameProps>>(db, cypher!("container_names_by_ids"), ids, "container").await
}

pub(super) async fn field_names_by_ids(db: impl Run, ids: &[Id]) -> StoreResult<Vec<(Id, Id, String)>> {
    decode_by_ids::<Positional<FieldNameProps>>(db, cypher!("field_names_by_ids"), ids, "field").await
}

pub(super) async fn fields_of_containers(db: impl Run, ids: &[Id]) -> StoreResult<Vec<Field>> {
    decode_by_ids::<FieldProps>(db, cypher!("fields_of_containers"), ids, "field").await
}

pub(super) async fn container_fields(
    mut db: impl Run,
    container_id: Id,
    name: Option<&str>,
    page: PageRequest,
) -> StoreResult<Page<Field>> {
    db.run(
        cypher!("container_fields")
            .param("container_id", container_id)
            .param("name", name.map(str::to_lowercase))
            .param("skip", page.offset())
            .param("limit", page.size),
    )
    .await?
    .page::<FieldProps>(page)
}

pub(super) async fn delete_field_in(txn: &mut Tx<'_>, id: Id) -> StoreResult<bool> {
    let field = fields_by_ids(&mut *txn, &[id]).await?.into_iter().next();
    let found = deleted(&mut *txn, cypher!("delete_field").param("id", id)).await?;
    if let (true, Some(field)) = (found, field) {
        let change = NewChange::field(ChangeKind::FieldDropped, id, field.container_id, crate::domain::now());
        record_in(txn, &[change]).await?;
    }
    Ok(found)
}

/// Whether a delete statement (returning `deleted`, a count) found its node.
async fn deleted(mut db: impl Run, cmd: Cmd) -> StoreResult<bool> {
    let deleted: i64 = db.run(cmd).await?.value("deleted")?;
    Ok(deleted > 0)
}
