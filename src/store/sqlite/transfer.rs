//! Export and import of the embedded store as `Record`s: the whole store in an order `import`
//! can replay (datastores before their containers, edges before their evidence), and the
//! replay into an empty store, keeping every id.

use rusqlite::{params, Connection, Row, Statement};

use super::assertions::put_metadata_tx;
use super::edges::execute_evidence;
use super::events::insert_event_row;
use super::rows::{
    container_row, datastore_row, edge_row, edge_ukey, end_cols, event_row, evidence_row, field_row, intervals_text,
    json_col, metadata_row, ts, CONTAINER_COLS, DATASTORE_COLS, EDGE_COLS, EVENT_COLS, EVIDENCE_COLS, FIELD_COLS,
    METADATA_COLS,
};
use super::{internal, sql_err, STORE};
use crate::domain::container_key;
use crate::metrics::store_query;
use crate::store::{Record, StoreError, StoreResult};

/// Appends a record for every row of `sql` to `out`. Prepared, not cached: an export is rare,
/// and its statements would only push the hot ones out of the cache.
fn push_all(
    c: &Connection,
    out: &mut Vec<Record>,
    sql: &str,
    record: impl FnMut(&Row) -> rusqlite::Result<Record>,
) -> rusqlite::Result<()> {
    let mut s = c.prepare(sql)?;
    for x in s.query_map([], record)? {
        out.push(x?);
    }
    Ok(())
}

pub(super) fn export(c: &Connection) -> rusqlite::Result<Vec<Record>> {
    let mut out = Vec::new();
    store_query(STORE, "export");
    let sql = format!("SELECT {DATASTORE_COLS} FROM datastores ORDER BY id");
    push_all(c, &mut out, &sql, |r| datastore_row(r).map(Record::Datastore))?;
    // Deleted containers and fields are not exported: retired edges keep their ids,
    // which is all a deleted end ever shows.
    let sql = format!("SELECT {CONTAINER_COLS} FROM containers WHERE deleted = 0 ORDER BY id");
    push_all(c, &mut out, &sql, |r| container_row(r).map(Record::Container))?;
    let sql = format!("SELECT {FIELD_COLS} FROM fields WHERE deleted = 0 ORDER BY id");
    push_all(c, &mut out, &sql, |r| field_row(r).map(Record::Field))?;
    let sql = format!("SELECT {EDGE_COLS} FROM edges ORDER BY id");
    push_all(c, &mut out, &sql, |r| edge_row(r).map(Record::Edge))?;
    let sql = format!("SELECT {EVIDENCE_COLS} FROM evidence ORDER BY edge_id, key");
    push_all(c, &mut out, &sql, |r| evidence_row(r).map(Record::Evidence))?;
    let sql = format!("SELECT {METADATA_COLS} FROM metadata ORDER BY container_id, field_id, attribute, source");
    push_all(c, &mut out, &sql, |r| metadata_row(r).map(Record::Metadata))?;
    push_all(c, &mut out, "SELECT kind, key, value FROM docs ORDER BY kind, key", |r| {
        Ok(Record::Doc {
            kind: r.get(0)?,
            key: r.get(1)?,
            value: json_col(r.get(2)?)?.unwrap_or(serde_json::Value::Null),
        })
    })?;
    let sql = format!("SELECT {EVENT_COLS} FROM events ORDER BY id");
    push_all(c, &mut out, &sql, |r| event_row(r).map(Record::Event))?;
    out.extend(super::jobs::export(c)?);
    Ok(out)
}

/// Replays the records of every chunk, in order, into an empty store (one transaction: the
/// caller's).
pub(super) fn import(tx: &Connection, chunks: impl IntoIterator<Item = Vec<Record>>) -> StoreResult<usize> {
    store_query(STORE, "import_check_empty");
    let n: i64 = tx
        .query_row(
            "SELECT (SELECT count(*) FROM datastores) + (SELECT count(*) FROM containers) + (SELECT count(*) FROM edges)",
            [],
            |r| r.get(0),
        )
        .map_err(sql_err)?;
    if n > 0 {
        return Err(StoreError::Invalid("import needs an empty store; this one already holds data".into()));
    }
    // Each statement is prepared once for the whole import, not once per row.
    let prepare = |sql: &str| tx.prepare(sql).map_err(sql_err);
    let datastore = prepare(&format!("INSERT INTO datastores ({DATASTORE_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"))?;
    let container = prepare(
        "INSERT INTO containers (id, datastore_id, key, name, database, schema, container_type, table_type, display_name, purpose, active_anomaly_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    let field = prepare(&format!("INSERT INTO fields ({FIELD_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"))?;
    let edge = prepare(&format!(
        "INSERT INTO edges ({EDGE_COLS}, ukey) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
    ))?;
    // A first-start admin may already exist: the imported documents replace it.
    let doc = prepare("INSERT OR REPLACE INTO docs (kind, key, value) VALUES (?1, ?2, ?3)")?;
    let evidence = prepare(&format!(
        "INSERT INTO evidence ({EVIDENCE_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
    ))?;
    let mut statements = ImportStatements { datastore, container, field, edge, doc, evidence };
    let mut total = 0;
    for records in chunks {
        total += records.len();
        import_records(tx, &records, &mut statements)?;
    }
    // Operation ids continue past those the imported evidence names.
    store_query(STORE, "raise_operation_id");
    tx.execute(
        "INSERT INTO operations (id, started) SELECT max(last_observed_operation_id), ?1 FROM evidence
         WHERE last_observed_operation_id IS NOT NULL HAVING count(*) > 0",
        params![ts(&crate::domain::now())],
    )
    .map_err(sql_err)?;
    Ok(total)
}

/// The statements of `import`, prepared once for every chunk.
struct ImportStatements<'c> {
    datastore: Statement<'c>,
    container: Statement<'c>,
    field: Statement<'c>,
    edge: Statement<'c>,
    doc: Statement<'c>,
    evidence: Statement<'c>,
}

/// One chunk of `import`.
fn import_records(tx: &Connection, records: &[Record], statements: &mut ImportStatements) -> StoreResult<()> {
    let ImportStatements { datastore, container, field, edge, doc, evidence } = statements;
    for r in records {
        store_query(STORE, "import_record");
        match r {
            Record::Datastore(d) => datastore.execute(params![
                d.id,
                d.name,
                d.kind,
                d.store_type,
                serde_json::to_string(&d.namespaces).map_err(internal)?,
                d.enrichment_only
            ]),
            Record::Container(x) => container.execute(params![
                x.id,
                x.datastore_id,
                container_key(x.database.as_deref(), x.schema.as_deref(), &x.name),
                x.name,
                x.database,
                x.schema,
                x.container_type,
                x.table_type,
                x.display_name,
                x.purpose,
                x.active_anomaly_count
            ]),
            Record::Field(x) => field.execute(params![
                x.id,
                x.container_id,
                x.name,
                x.display_name,
                x.data_type,
                x.status,
                x.latest_profile_id,
                x.is_computed_field,
                x.active_anomaly_count
            ]),
            Record::Edge(e) => {
                let (sk, sid, sc, sf) = end_cols(&e.source);
                let (tk, tid, tc, tf) = end_cols(&e.target);
                edge.execute(params![
                    e.id,
                    ts(&e.created),
                    sk,
                    sid,
                    sc,
                    sf,
                    tk,
                    tid,
                    tc,
                    tf,
                    e.description,
                    e.source_type,
                    e.operation,
                    e.derived,
                    e.transformations.as_ref().map(|t| t.to_string()),
                    e.last_asserted_at.as_ref().map(ts),
                    e.retired_at.as_ref().map(ts),
                    intervals_text(&e.intervals),
                    edge_ukey(&e.source, &e.target, &e.source_type)
                ])
            }
            Record::Event(e) => insert_event_row(tx, e, true).map(|_| 1),
            Record::Metadata(m) => put_metadata_tx(tx, std::slice::from_ref(m)).map(|_| 1),
            Record::Doc { kind, key, value } => doc.execute(params![kind, key, value.to_string()]),
            Record::Evidence(e) => execute_evidence(evidence, e),
            Record::Job(j) => super::jobs::import_job(tx, j).map(|_| 1),
            Record::Run(r) => super::jobs::import_run(tx, r).map(|_| 1),
            Record::JobIo { job_id, entry } => super::jobs::import_io(tx, true, *job_id, entry).map(|_| 1),
            Record::RunIo { run_id, entry } => super::jobs::import_io(tx, false, *run_id, entry).map(|_| 1),
        }
        .map_err(|e| StoreError::Invalid(format!("record could not be imported: {e}")))?;
    }
    Ok(())
}
