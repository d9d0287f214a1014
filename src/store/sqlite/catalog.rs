//! The catalog in the embedded store: datastores, containers and fields. Upserts, batched reads
//! by ids (one `rarray` join each), the paged lists, the name matcher, and soft deletes (a
//! deleted container or field keeps its row, flagged `deleted`, so retired edges keep their ids).

use rusqlite::types::Value as SqlValue;
use rusqlite::{params, Connection, OptionalExtension};

use super::changes::record;
use super::rows::{
    container_row, datastore_row, distinct_ids, field_row, id_array, str_array, CONTAINER_COLS, DATASTORE_COLS,
    FIELD_COLS,
};
use super::{internal, select_page, select_rows, sql_err, Filter, Listing, STORE};
use crate::domain::{
    container_key, ChangeKind, Container, ContainerInput, Datastore, DatastoreInput, Field, Id, NewChange, Page,
    PageRequest,
};
use crate::metrics::store_query;
use crate::store::{StoreError, StoreResult};

pub(super) fn upsert_datastore(tx: &Connection, input: DatastoreInput) -> StoreResult<Datastore> {
    store_query(STORE, "upsert_datastore");
    let ns = serde_json::to_string(&input.namespaces).map_err(internal)?;
    tx.query_row(
        &format!(
            "INSERT INTO datastores (name, type, store_type, namespaces, enrichment_only) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(name) DO UPDATE SET type = excluded.type, store_type = excluded.store_type,
               namespaces = excluded.namespaces, enrichment_only = excluded.enrichment_only
             RETURNING {DATASTORE_COLS}"
        ),
        params![input.name, input.kind, input.store_type, ns, input.enrichment_only],
        datastore_row,
    )
    .map_err(sql_err)
}

pub(super) fn datastores_by_ids(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<Datastore>> {
    select_rows(
        c,
        "datastores_by_ids",
        &format!("SELECT {DATASTORE_COLS} FROM rarray(?1) AS k CROSS JOIN datastores ON datastores.id = k.value"),
        params![distinct_ids(ids)],
        datastore_row,
    )
}

pub(super) fn list_datastores(c: &Connection) -> rusqlite::Result<Vec<Datastore>> {
    select_rows(
        c,
        "list_datastores",
        &format!("SELECT {DATASTORE_COLS} FROM datastores ORDER BY id"),
        [],
        datastore_row,
    )
}

pub(super) fn delete_datastore(tx: &Connection, id: Id) -> StoreResult<bool> {
    store_query(STORE, "delete_datastore");
    let n = tx.execute("DELETE FROM datastores WHERE id = ?1", params![id]).map_err(sql_err)?;
    store_query(STORE, "delete_datastore_fields");
    tx.execute(
        "UPDATE fields SET deleted = 1 WHERE container_id IN (SELECT id FROM containers WHERE datastore_id = ?1)",
        params![id],
    )
    .map_err(sql_err)?;
    store_query(STORE, "delete_datastore_containers");
    let dropped: Vec<Id> = select_rows(
        tx,
        "delete_datastore_containers",
        "UPDATE containers SET deleted = 1 WHERE datastore_id = ?1 AND deleted = 0 RETURNING id",
        params![id],
        |r| r.get(0),
    )
    .map_err(sql_err)?;
    let now = crate::domain::now();
    record(
        tx,
        &dropped.iter().map(|c| NewChange::container(ChangeKind::ContainerDropped, *c, now)).collect::<Vec<_>>(),
    )?;
    Ok(n > 0)
}

pub(super) fn upsert_container(tx: &Connection, input: ContainerInput) -> StoreResult<(Container, Vec<Field>)> {
    store_query(STORE, "datastore_exists");
    let ds: Option<Id> = tx
        .query_row("SELECT id FROM datastores WHERE id = ?1", params![input.datastore_id], |r| r.get(0))
        .optional()
        .map_err(sql_err)?;
    if ds.is_none() {
        return Err(StoreError::NotFound(format!("Datastore {} not found", input.datastore_id)));
    }
    let key = container_key(input.database.as_deref(), input.schema.as_deref(), &input.name);
    // Ids only grow (AUTOINCREMENT): a row returned above the largest id before is a new one.
    store_query(STORE, "largest_catalog_ids");
    let (last_container, last_field): (Id, Id) = tx
        .query_row(
            "SELECT (SELECT coalesce(max(id), 0) FROM containers), (SELECT coalesce(max(id), 0) FROM fields)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(sql_err)?;
    store_query(STORE, "upsert_container");
    let container = tx
        .query_row(
            &format!(
                "INSERT INTO containers (datastore_id, key, name, database, schema, container_type, table_type, display_name, purpose, active_anomaly_count)
                 VALUES (?1, ?2, ?3, ?4, ?5, coalesce(?6, 'table'), ?7, ?8, ?9, coalesce(?10, 0))
                 ON CONFLICT(datastore_id, key) WHERE deleted = 0 DO UPDATE SET
                   container_type = coalesce(?6, container_type), table_type = coalesce(?7, table_type),
                   display_name = coalesce(?8, display_name), purpose = coalesce(?9, purpose),
                   active_anomaly_count = coalesce(?10, active_anomaly_count)
                 RETURNING {CONTAINER_COLS}"
            ),
            params![
                input.datastore_id, key, input.name, input.database, input.schema, input.container_type,
                input.table_type, input.display_name, input.purpose, input.active_anomaly_count
            ],
            container_row,
        )
        .map_err(sql_err)?;
    let mut fields = Vec::with_capacity(input.fields.len());
    {
        let mut stmt = tx
            .prepare_cached(&format!(
                "INSERT INTO fields (container_id, name, data_type, display_name, status, latest_profile_id, is_computed_field, active_anomaly_count)
                 VALUES (?1, ?2, ?3, ?4, coalesce(?5, 'active'), ?6, coalesce(?7, 0), coalesce(?8, 0))
                 ON CONFLICT(container_id, name) WHERE deleted = 0 DO UPDATE SET
                   data_type = coalesce(?3, data_type), display_name = coalesce(?4, display_name),
                   status = coalesce(?5, status), latest_profile_id = coalesce(?6, latest_profile_id),
                   is_computed_field = coalesce(?7, is_computed_field), active_anomaly_count = coalesce(?8, active_anomaly_count)
                 RETURNING {FIELD_COLS}"
            ))
            .map_err(sql_err)?;
        for f in &input.fields {
            store_query(STORE, "upsert_field");
            let field = stmt
                .query_row(
                    params![
                        container.id,
                        f.name,
                        f.data_type,
                        f.display_name,
                        f.status,
                        f.latest_profile_id,
                        f.is_computed_field,
                        f.active_anomaly_count
                    ],
                    field_row,
                )
                .map_err(sql_err)?;
            fields.push(field);
        }
    }
    let now = crate::domain::now();
    let mut changes = Vec::new();
    if container.id > last_container {
        changes.push(NewChange::container(ChangeKind::ContainerCreated, container.id, now));
    }
    let mut new_fields: Vec<Id> = fields.iter().map(|f| f.id).filter(|id| *id > last_field).collect();
    // A name listed twice returns its row twice.
    new_fields.dedup();
    changes.extend(new_fields.into_iter().map(|f| NewChange::field(ChangeKind::FieldCreated, f, container.id, now)));
    record(tx, &changes)?;
    Ok((container, fields))
}

pub(super) fn containers_by_ids(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<Container>> {
    select_rows(
        c,
        "containers_by_ids",
        &format!(
            "SELECT {CONTAINER_COLS} FROM rarray(?1) AS k CROSS JOIN containers
             ON containers.id = k.value AND containers.deleted = 0"
        ),
        params![distinct_ids(ids)],
        container_row,
    )
}

pub(super) fn container_names_by_ids(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<(Id, String)>> {
    select_rows(
        c,
        "container_names_by_ids",
        "SELECT containers.id, containers.name FROM rarray(?1) AS k CROSS JOIN containers
         ON containers.id = k.value AND containers.deleted = 0",
        params![distinct_ids(ids)],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

const CONTAINERS: Listing = Listing {
    table: "containers",
    cols: CONTAINER_COLS,
    order: "id",
    count_op: "count_containers",
    list_op: "list_containers",
};

/// `name` given lowercased.
pub(super) fn list_containers(
    c: &Connection,
    datastore_id: Option<Id>,
    name: Option<String>,
    page: PageRequest,
) -> rusqlite::Result<Page<Container>> {
    let mut w = Filter::default();
    w.always("deleted = 0")
        .when("datastore_id = ?", datastore_id.map(SqlValue::Integer))
        // The qualified name (`database.schema.name`), of which the name is the end.
        .when(
            "instr(unicode_lower(coalesce(nullif(database, '') || '.', '') || coalesce(nullif(schema, '') || '.', '') || name), ?) > 0",
            name.map(SqlValue::Text),
        );
    select_page(c, &CONTAINERS, &w.sql(), w.params, page, container_row)
}

pub(super) fn containers_by_names(
    c: &Connection,
    names: &[String],
    datastores: Option<&[Id]>,
) -> rusqlite::Result<Vec<Container>> {
    // The expression must read exactly as the index's for the planner to use it.
    let sql = format!(
        "SELECT {CONTAINER_COLS} FROM containers WHERE deleted = 0 AND unicode_lower(name) IN rarray(?1){} ORDER BY id",
        if datastores.is_some() { " AND datastore_id IN rarray(?2)" } else { "" }
    );
    let op = "containers_by_names";
    match datastores {
        Some(ds) => select_rows(c, op, &sql, params![str_array(names), id_array(ds)], container_row),
        None => select_rows(c, op, &sql, params![str_array(names)], container_row),
    }
}

pub(super) fn delete_container(tx: &Connection, id: Id) -> StoreResult<bool> {
    store_query(STORE, "delete_container");
    let n =
        tx.execute("UPDATE containers SET deleted = 1 WHERE id = ?1 AND deleted = 0", params![id]).map_err(sql_err)?;
    store_query(STORE, "delete_container_fields");
    tx.execute("UPDATE fields SET deleted = 1 WHERE container_id = ?1", params![id]).map_err(sql_err)?;
    if n > 0 {
        record(tx, &[NewChange::container(ChangeKind::ContainerDropped, id, crate::domain::now())])?;
    }
    Ok(n > 0)
}

pub(super) fn fields_by_ids(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<Field>> {
    select_rows(
        c,
        "fields_by_ids",
        &format!(
            "SELECT {FIELD_COLS} FROM rarray(?1) AS k CROSS JOIN fields ON fields.id = k.value AND fields.deleted = 0"
        ),
        params![distinct_ids(ids)],
        field_row,
    )
}

pub(super) fn field_names_by_ids(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<(Id, Id, String)>> {
    select_rows(
        c,
        "field_names_by_ids",
        "SELECT fields.container_id, fields.id, fields.name FROM rarray(?1) AS k CROSS JOIN fields
         ON fields.id = k.value AND fields.deleted = 0",
        params![distinct_ids(ids)],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

pub(super) fn fields_of_containers(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<Field>> {
    select_rows(
        c,
        "fields_of_containers",
        &format!(
            "SELECT {FIELD_COLS} FROM rarray(?1) AS k CROSS JOIN fields
             ON fields.container_id = k.value AND fields.deleted = 0 ORDER BY id"
        ),
        params![distinct_ids(ids)],
        field_row,
    )
}

pub(super) fn field_names_of_containers(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<(Id, Id, String)>> {
    // `fields_key` (container_id, name) holds all three columns: the table is not read.
    select_rows(
        c,
        "field_names_of_containers",
        "SELECT fields.container_id, fields.id, fields.name FROM rarray(?1) AS k CROSS JOIN fields
         ON fields.container_id = k.value AND fields.deleted = 0 ORDER BY fields.id",
        params![distinct_ids(ids)],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

const FIELDS: Listing =
    Listing { table: "fields", cols: FIELD_COLS, order: "id", count_op: "count_fields", list_op: "container_fields" };

/// `name` given lowercased.
pub(super) fn container_fields(
    c: &Connection,
    container_id: Id,
    name: Option<String>,
    page: PageRequest,
) -> rusqlite::Result<Page<Field>> {
    let filter = "deleted = 0 AND container_id = ?1 AND (?2 IS NULL OR instr(unicode_lower(name), ?2) > 0)";
    let params = vec![SqlValue::Integer(container_id), name.map_or(SqlValue::Null, SqlValue::Text)];
    select_page(c, &FIELDS, filter, params, page, field_row)
}

pub(super) fn delete_field(tx: &Connection, id: Id) -> StoreResult<bool> {
    store_query(STORE, "delete_field");
    let container: Option<Id> = tx
        .query_row(
            "UPDATE fields SET deleted = 1 WHERE id = ?1 AND deleted = 0 RETURNING container_id",
            params![id],
            |r| r.get(0),
        )
        .optional()
        .map_err(sql_err)?;
    if let Some(container) = container {
        record(tx, &[NewChange::field(ChangeKind::FieldDropped, id, container, crate::domain::now())])?;
    }
    Ok(container.is_some())
}
