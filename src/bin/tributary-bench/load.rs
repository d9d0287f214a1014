//! The load scenario: the generated graph streamed into a store through `Store::import_chunks`
//! (a chunk of records at a time, so the xlarge size never exists in memory as records), and its
//! baseline: the same records bulk-loaded straight into the embedded store's schema with
//! rusqlite, the fastest the embedded store's import could be.

use std::time::{Duration, Instant};

use tributary::store::{Record, Store, StoreResult};

use crate::gen::Graph;
use crate::harness::TempDir;

/// Records per chunk: big enough that the channel costs nothing, small enough to be a few MiB.
const CHUNK: usize = 20_000;

/// Imports the whole graph into an empty store, the records made a chunk at a time while the
/// store writes the previous one.
pub(crate) async fn import_graph(store: &dyn Store, g: &Graph) -> StoreResult<usize> {
    let (tx, rx) = tokio::sync::mpsc::channel(2);
    let produce = async move {
        for chunk in g.record_chunks(CHUNK) {
            // A closed channel means the import failed; its error is the one reported.
            if tx.send(chunk).await.is_err() {
                break;
            }
        }
    };
    let (imported, ()) = tokio::join!(store.import_chunks(rx), produce);
    imported
}

/// The embedded store's limit for a bulk load: the same rows into the same schema, through
/// cached prepared statements, in one transaction; the records made on another thread, a chunk
/// at a time, as `import_graph` does.
pub(crate) fn baseline_load_sqlite(g: &Graph) -> anyhow::Result<Duration> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Record>>(2);
    std::thread::scope(|s| {
        s.spawn(move || {
            for chunk in g.record_chunks(CHUNK) {
                if tx.send(chunk).is_err() {
                    break;
                }
            }
        });
        baseline_insert(rx)
    })
}

fn baseline_insert(chunks: std::sync::mpsc::Receiver<Vec<Record>>) -> anyhow::Result<Duration> {
    use rusqlite::params;
    let dir = TempDir::new("load-baseline")?;
    drop(tributary::store::sqlite::SqliteStore::open(&dir.0)?);
    let mut conn = rusqlite::Connection::open(dir.0.join("tributary.db"))?;
    // The schema's name index calls the store's `unicode_lower`; inserts need it too.
    tributary::store::sqlite::register_unicode_lower(&conn)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    let ts = |t: &tributary::domain::Timestamp| t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let cols = |e: &tributary::domain::End| match e {
        tributary::domain::End::Container { id } => ("c", Some(*id), Some(*id), None),
        tributary::domain::End::Field { id, container_id } => ("f", Some(*id), Some(*container_id), None),
        tributary::domain::End::External { fqn } => ("x", None, None, Some(fqn.clone())),
    };
    let t = Instant::now();
    let tx = conn.transaction()?;
    {
        let mut ds = tx.prepare_cached("INSERT INTO datastores (id, name, type, store_type, namespaces, enrichment_only) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
        let mut cs = tx.prepare_cached("INSERT INTO containers (id, datastore_id, key, name, database, schema, container_type, table_type, display_name, purpose, active_anomaly_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)")?;
        let mut fs = tx.prepare_cached("INSERT INTO fields (id, container_id, name, display_name, data_type, status, latest_profile_id, is_computed_field, active_anomaly_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")?;
        let mut es = tx.prepare_cached("INSERT INTO edges (id, created, source_kind, source_id, source_container_id, source_fqn, target_kind, target_id, target_container_id, target_fqn, description, source_type, operation, derived, transformations, last_asserted_at, retired_at, intervals, ukey) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)")?;
        for r in chunks.iter().flatten() {
            match &r {
                Record::Datastore(d) => {
                    ds.execute(params![
                        d.id,
                        d.name,
                        d.kind,
                        d.store_type,
                        serde_json::to_string(&d.namespaces)?,
                        d.enrichment_only
                    ])?;
                }
                Record::Container(x) => {
                    let key = tributary::domain::container_key(x.database.as_deref(), x.schema.as_deref(), &x.name);
                    cs.execute(params![
                        x.id,
                        x.datastore_id,
                        key,
                        x.name,
                        x.database,
                        x.schema,
                        x.container_type,
                        x.table_type,
                        x.display_name,
                        x.purpose,
                        x.active_anomaly_count
                    ])?;
                }
                Record::Field(x) => {
                    fs.execute(params![
                        x.id,
                        x.container_id,
                        x.name,
                        x.display_name,
                        x.data_type,
                        x.status,
                        x.latest_profile_id,
                        x.is_computed_field,
                        x.active_anomaly_count
                    ])?;
                }
                Record::Edge(e) => {
                    let (sk, sid, sc, sf) = cols(&e.source);
                    let (tk, tid, tc, tf) = cols(&e.target);
                    es.execute(params![
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
                        serde_json::to_string(&e.intervals)?,
                        tributary::store::sqlite::edge_ukey(&e.source, &e.target, &e.source_type)
                    ])?;
                }
                _ => {}
            }
        }
    }
    tx.commit()?;
    Ok(t.elapsed())
}
