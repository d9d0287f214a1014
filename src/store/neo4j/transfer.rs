//! The whole store at once: `export` and `import` of `Record`s (`tributary export` and
//! `tributary import`, one JSON record a line), and `wipe`, which tests and operators use to
//! empty a database. `import` (and `import_chunks`, the same fed a chunk at a time) writes its
//! rows in batches of `IMPORT_BATCH`, one statement each, committed every `IMPORT_TX_ROWS`, since
//! Neo4j bounds what one transaction may hold.

use std::collections::HashMap;

use neo4rs::{BoltType, Txn};

use super::jobs::{self, JOB_COUNTER, RUN_COUNTER};
use super::rows::{
    container_row, datastore_row, edge_row, event_row, evidence_row, field_row, list, map, metadata_row,
    ContainerProps, EdgeProps, EventProps, EvidenceProps, FieldProps, MetadataProps,
};
use super::{
    catalog, exec, internal, Cmd, Neo4jStore, OwnTxn, Run, CONTAINER_COUNTER, DATASTORE_COUNTER, EDGE_COUNTER,
    EVENT_COUNTER, FIELD_COUNTER, OPERATION_COUNTER,
};
use crate::domain::{End, Id};
use crate::store::{Record, RecordChunks, StoreError, StoreResult};

/// Rows per statement when importing.
const IMPORT_BATCH: usize = 1000;
/// Rows per transaction when importing: Neo4j bounds a transaction's memory
/// (`dbms.memory.transaction.total.max`), so an import commits as it goes instead of holding the
/// whole store in one transaction.
const IMPORT_TX_ROWS: usize = 10_000;

/// Datastores, live containers, live fields, every edge (retired ones included), evidence,
/// metadata, documents, events, then jobs, runs and their datasets: the embedded store's records
/// in its order.
///
/// Deleted containers and fields are not exported: `Record` has no way to say "deleted", and
/// exporting them would bring them back to life on import. The edges that still reference
/// them (retired edges keep their ends) are exported, and `import` gives such an end a node
/// marked deleted, so export → import → export yields the same records.
pub(super) async fn export_in(txn: &mut Txn) -> StoreResult<Vec<Record>> {
    let mut records = Vec::new();
    records.extend(catalog::list_datastores(&mut *txn).await?.into_iter().map(Record::Datastore));
    let containers = exec(txn, cypher!("export_containers")).await?;
    records.extend(containers.decode::<ContainerProps>("container")?.into_iter().map(Record::Container));
    let fields = exec(txn, cypher!("export_fields")).await?;
    records.extend(fields.decode::<FieldProps>("field")?.into_iter().map(Record::Field));
    let edges = exec(txn, cypher!("export_edges")).await?;
    records.extend(edges.decode::<EdgeProps>("edge")?.into_iter().map(Record::Edge));
    let evidence = exec(txn, cypher!("export_evidence")).await?;
    records.extend(evidence.decode::<EvidenceProps>("evidence")?.into_iter().map(Record::Evidence));
    let metadata = exec(txn, cypher!("export_metadata")).await?;
    records.extend(metadata.decode::<MetadataProps>("metadata")?.into_iter().map(Record::Metadata));
    let docs = exec(txn, cypher!("export_docs")).await?;
    let (kinds, keys, values): (Vec<String>, Vec<String>, Vec<String>) =
        (docs.column("kind")?, docs.column("key")?, docs.column("value")?);
    for ((kind, key), value) in kinds.into_iter().zip(keys).zip(values) {
        let value = serde_json::from_str(&value).map_err(|e| internal("export_docs", e.to_string()))?;
        records.push(Record::Doc { kind, key, value });
    }
    let events = exec(txn, cypher!("export_events")).await?;
    records.extend(events.decode::<EventProps>("event")?.into_iter().map(Record::Event));
    let (jobs, runs, job_io, run_io) = jobs::export_in(txn).await?;
    records.extend(jobs.into_iter().map(Record::Job));
    records.extend(runs.into_iter().map(Record::Run));
    records.extend(job_io.into_iter().map(|(job_id, entry)| Record::JobIo { job_id, entry }));
    records.extend(run_io.into_iter().map(|(run_id, entry)| Record::RunIo { run_id, entry }));
    Ok(records)
}

/// Rows of one chunk of `import`, by kind, in the order they are written.
#[derive(Default)]
struct ImportRows {
    datastores: Vec<BoltType>,
    containers: Vec<BoltType>,
    fields: Vec<BoltType>,
    edges: Vec<BoltType>,
    evidence: Vec<BoltType>,
    metadata: Vec<BoltType>,
    events: Vec<BoltType>,
    docs: Vec<BoltType>,
    jobs: Vec<BoltType>,
    runs: Vec<BoltType>,
    job_io: Vec<BoltType>,
    run_io: Vec<BoltType>,
    /// `job_tie_imported_evidence` rows: each evidence to the run or job that asserted it.
    ties: Vec<BoltType>,
}

/// The highest id of each kind imported so far, edge ends included (an end may name a deleted
/// container or field that is not among the records), so the counters continue past them.
type MaxIds = HashMap<&'static str, Id>;

/// Raises the counters past the ids an end names (an end may name a deleted container or field
/// that is not among the records).
fn see_end(see: &mut impl FnMut(&'static str, Id), end: &End) {
    match end {
        End::Container { id } => see(CONTAINER_COUNTER, *id),
        End::Field { id, container_id } => {
            see(FIELD_COUNTER, *id);
            see(CONTAINER_COUNTER, *container_id);
        }
        End::External { .. } => {}
    }
}

/// Turns a chunk's records into rows (failing, before the chunk is written, on a record that
/// cannot be stored), and raises `max` to the ids they hold.
fn import_rows(records: &[Record], max: &mut MaxIds) -> StoreResult<ImportRows> {
    let mut out = ImportRows::default();
    let mut see = |counter: &'static str, id: Id| {
        let entry = max.entry(counter).or_insert(id);
        *entry = (*entry).max(id);
    };
    for record in records {
        match record {
            Record::Doc { kind, key, value } => out.docs.push(map([
                ("kind", kind.clone().into()),
                ("key", key.clone().into()),
                ("value", value.to_string().into()),
            ])),
            Record::Datastore(d) => {
                see(DATASTORE_COUNTER, d.id);
                out.datastores.push(datastore_row(d));
            }
            Record::Container(c) => {
                see(CONTAINER_COUNTER, c.id);
                out.containers.push(container_row(c));
            }
            Record::Field(f) => {
                see(FIELD_COUNTER, f.id);
                out.fields.push(field_row(f));
            }
            Record::Edge(e) => {
                see(EDGE_COUNTER, e.id);
                for end in [&e.source, &e.target] {
                    see_end(&mut see, end);
                }
                out.edges.push(edge_row(e)?);
            }
            Record::Evidence(e) => {
                if let Some(op) = e.last_observed_operation_id {
                    see(OPERATION_COUNTER, op);
                }
                out.ties.extend(jobs::evidence_tie_row(e));
                out.evidence.push(evidence_row(e)?)
            }
            Record::Metadata(m) => out.metadata.push(metadata_row(m)?),
            Record::Event(e) => {
                see(EVENT_COUNTER, e.id);
                out.events.push(event_row(e)?);
            }
            Record::Job(j) => {
                see(JOB_COUNTER, j.id);
                out.jobs.push(jobs::import_job_row(j));
            }
            Record::Run(r) => {
                see(RUN_COUNTER, r.id);
                out.runs.push(jobs::import_run_row(r));
            }
            Record::JobIo { job_id, entry } => {
                see_end(&mut see, &entry.end);
                out.job_io.push(jobs::import_io_row(*job_id, entry));
            }
            Record::RunIo { run_id, entry } => {
                see_end(&mut see, &entry.end);
                out.run_io.push(jobs::import_io_row(*run_id, entry));
            }
        }
    }
    Ok(out)
}

/// Runs one import statement per `IMPORT_BATCH` rows, in transactions of `IMPORT_TX_ROWS` rows.
async fn import_batches(store: &Neo4jStore, rows: Vec<BoltType>, cmd: fn() -> Cmd) -> StoreResult<()> {
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        store
            .write_once(async |txn| {
                for _ in 0..IMPORT_TX_ROWS.div_ceil(IMPORT_BATCH) {
                    if rows.peek().is_none() {
                        break;
                    }
                    let batch: Vec<BoltType> = rows.by_ref().take(IMPORT_BATCH).collect();
                    exec(txn, cmd().param("rows", list(batch))).await?;
                }
                Ok(())
            })
            .await?;
    }
    Ok(())
}

/// The writes of `import` after the emptiness check, chunk by chunk. The documents and the
/// counters go last, in one transaction: until then a failure has touched nothing but the
/// imported nodes.
async fn import_all(store: &Neo4jStore, chunks: &mut RecordChunks) -> StoreResult<usize> {
    let (mut total, mut max, mut docs, mut ties) = (0, MaxIds::new(), Vec::new(), Vec::new());
    while let Some(records) = chunks.recv().await {
        total += records.len();
        let rows = import_rows(&records, &mut max)?;
        drop(records);
        import_batches(store, rows.datastores, || cypher!("import_datastores")).await?;
        import_batches(store, rows.containers, || cypher!("import_containers")).await?;
        import_batches(store, rows.fields, || cypher!("import_fields")).await?;
        import_batches(store, rows.edges, || cypher!("import_edges")).await?;
        import_batches(store, rows.evidence, || cypher!("put_evidence")).await?;
        // Upserted as `put_metadata` does, in record order, as the embedded store imports them.
        import_batches(store, rows.metadata, || cypher!("put_metadata")).await?;
        import_batches(store, rows.events, || cypher!("import_events")).await?;
        // Jobs before their runs (HAS_RUN), both before their datasets; a CHILD_OF whose other
        // end comes in a later batch is made when that end is written (see `job_upsert`).
        import_batches(store, rows.jobs, jobs::import_job_cmd).await?;
        import_batches(store, rows.runs, jobs::import_run_cmd).await?;
        import_batches(store, rows.job_io, jobs::import_job_io_cmd).await?;
        import_batches(store, rows.run_io, jobs::import_run_io_cmd).await?;
        ties.extend(rows.ties);
        docs.extend(rows.docs);
    }
    // The evidence comes before the jobs and runs in an export, so it is tied to them once all
    // are written.
    import_batches(store, std::mem::take(&mut ties), jobs::import_ties_cmd).await?;
    let counters: Vec<BoltType> =
        max.into_iter().map(|(name, value)| map([("name", name.into()), ("value", value.into())])).collect();
    store
        .write_once(async |txn| {
            for batch in docs.chunks(IMPORT_BATCH) {
                exec(txn, cypher!("import_docs").param("rows", list(batch.to_vec()))).await?;
            }
            if !counters.is_empty() {
                exec(txn, cypher!("raise_counters").param("rows", list(counters.clone()))).await?;
            }
            Ok(())
        })
        .await?;
    Ok(total)
}

/// Loads the records into an empty store, keeping their ids and moving the id counters past
/// them (`import_chunks` with one chunk).
pub(super) async fn import(store: &Neo4jStore, records: Vec<Record>) -> StoreResult<usize> {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    // The channel has room for this one chunk, so the send cannot fail.
    let _ = tx.try_send(records);
    drop(tx);
    import_chunks(store, rx).await
}

/// Loads the chunks' records into an empty store. Neo4j bounds a transaction's memory, so the
/// rows are written in transactions of `IMPORT_TX_ROWS`; when one fails, the nodes already
/// imported are deleted again, so a failed import still leaves the store as it was (empty, its
/// counters and documents untouched).
pub(super) async fn import_chunks(store: &Neo4jStore, mut chunks: RecordChunks) -> StoreResult<usize> {
    if OwnTxn(store).run(cypher!("store_has_data")).await?.value::<bool>("has_data")? {
        return Err(StoreError::Invalid("Import needs an empty store; this one already holds data".to_string()));
    }
    match import_all(store, &mut chunks).await {
        Ok(total) => Ok(total),
        Err(e) => {
            loop {
                match OwnTxn(store).run(cypher!("unimport_nodes_batch")).await {
                    Ok(rows) if rows.value::<i64>("deleted")? > 0 => {}
                    Ok(_) => break,
                    Err(undo) => {
                        tracing::error!(error = %undo, "could not undo a failed import; wipe the database before retrying");
                        break;
                    }
                }
            }
            Err(match e {
                StoreError::Conflict(_) => {
                    StoreError::Invalid("The records repeat an id or a unique name; nothing was imported".to_string())
                }
                other => other,
            })
        }
    }
}

/// Deletes every relationship, then every node, a batch per statement (each in its own
/// transaction when `db` is `OwnTxn`), until a batch deletes nothing.
pub(super) async fn wipe(mut db: impl Run) -> StoreResult<()> {
    loop {
        let deleted: i64 = db.run(cypher!("wipe_relationships_batch")).await?.value("deleted")?;
        if deleted == 0 {
            break;
        }
    }
    loop {
        let deleted: i64 = db.run(cypher!("wipe_nodes_batch")).await?.value("deleted")?;
        if deleted == 0 {
            return Ok(());
        }
    }
}
