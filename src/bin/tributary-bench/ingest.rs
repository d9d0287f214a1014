//! The ingest scenario: OpenLineage events posted in batches of 1,000 to the service, against
//! parsing the same bodies (and, on Neo4j, a plain Cypher write of them) on the baseline; and
//! what resolving one dataset to a container costs against an indexed lookup.

use std::path::Path;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use tributary::store::Store;

use crate::gen::{self, Graph};
use crate::harness::{store_name, Client};
use crate::report::{
    ms, print_statements, print_store_time, say, statements_by_operation, store_call_seconds, store_statement_seconds,
    Report,
};
use crate::{Args, Plan};

/// What resolving one OpenLineage dataset to a container costs the service (its resolver reads
/// `containers_by_names` for the dataset name's candidate names within the namespace's
/// datastore), against an indexed lookup of the same container by its unique (datastore, key) in
/// the same database file.
pub(crate) async fn resolver_lookups(
    store: &dyn Store,
    db_dir: &Path,
    g: &Graph,
    report: &mut Report,
) -> anyhow::Result<()> {
    let picks: Vec<usize> = (0..50).map(|i| g.layers[2][(i * 7919) % g.layers[2].len()]).collect();
    let t = Instant::now();
    for &c in &picks {
        let name = gen::container_key(g, c).to_lowercase();
        let found = store.containers_by_names(&tributary::service::name_candidates(&name), Some(&[2])).await?;
        anyhow::ensure!(!found.is_empty(), "container {name} not found");
    }
    let service = t.elapsed() / picks.len() as u32;
    let conn = rusqlite::Connection::open(db_dir.join("tributary.db"))?;
    tributary::store::sqlite::register_unicode_lower(&conn)?;
    let t = Instant::now();
    for &c in &picks {
        let key = gen::container_key(g, c);
        let mut stmt = conn
            .prepare_cached("SELECT id, name FROM containers WHERE datastore_id = ?1 AND key = ?2 AND deleted = 0")?;
        let id: i64 = stmt.query_row(rusqlite::params![2, key], |r| r.get(0))?;
        anyhow::ensure!(id == Graph::container_id(c), "wrong container");
    }
    let base = t.elapsed() / picks.len() as u32;
    report.add("ingest", "dataset_lookup_ms", ms(service), Some(ms(base)));
    Ok(())
}

pub(crate) async fn ingest(
    client: &Client,
    plan: &Plan,
    args: &Args,
    g: &Graph,
    cypher: bool,
    report: &mut Report,
) -> anyhow::Result<()> {
    if plan.ingest_events == 0 {
        return Ok(());
    }
    let events = g.openlineage_events(plan.ingest_events, args.seed);
    let bodies: Vec<(usize, Bytes)> = events
        .chunks(1_000)
        .map(|c| Ok((c.len(), Bytes::from(serde_json::to_vec(c)?))))
        .collect::<anyhow::Result<_>>()?;
    let store = store_name(args.store);
    let ops_before = statements_by_operation(store);
    let mut batch_ops_before = ops_before.clone();
    let mut time_before = store_call_seconds(store);
    let mut statements_before = store_statement_seconds(store);
    let (mut st, mut pt, mut ct, mut bt) = (Duration::ZERO, Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let (mut failed, mut applied, mut total) = (0i64, 0i64, 0usize);
    for (n, body) in &bodies {
        let (service_took, v) = client.post(format!("{}/api/v1/lineage", client.service), body.clone()).await?;
        st += service_took;
        total += n;
        applied += v["applied"].as_i64().unwrap_or(0);
        failed += v["failed"].as_i64().unwrap_or(0) + v["rejected"].as_i64().unwrap_or(0);
        if failed > 0 {
            if let Some(bad) = v["events"]
                .as_array()
                .and_then(|a| a.iter().find(|e| e["status"] == "failed" || e["status"] == "rejected"))
            {
                say(&format!("  ingest: an event was not applied: {bad}"));
            }
        }
        // Each batch alone: a later one meets a bigger store and the first one's WAL.
        print_statements("ingest, per event", store, &batch_ops_before, *n);
        print_store_time("store calls, per event", store_call_seconds(store), &time_before, *n);
        if cypher {
            let now = store_statement_seconds(store);
            print_store_time("Neo4j statements in transactions, per event", now.clone(), &statements_before, *n);
            statements_before = now;
        }
        batch_ops_before = statements_by_operation(store);
        time_before = store_call_seconds(store);
        let (took, _) = client.post(format!("{}/parse", client.baseline), body.clone()).await?;
        pt += took;
        if cypher {
            let (took, _) = client.post(format!("{}/ingestCypher", client.baseline), body.clone()).await?;
            ct += took;
            let (took, _) = client.post(format!("{}/ingestCypherBatched", client.baseline), body.clone()).await?;
            bt += took;
        }
        say(&format!("  (ingest batch of {n}: service {:.2} s)", service_took.as_secs_f64()));
    }
    let rate = |d: Duration| total as f64 / d.as_secs_f64().max(1e-9);
    report.add("ingest", "events_per_sec_vs_json_parse", rate(st), Some(rate(pt)));
    if cypher {
        report.add("ingest", "events_per_sec_vs_cypher", rate(st), Some(rate(ct)));
        report.add("ingest", "events_per_sec_vs_cypher_batched", rate(st), Some(rate(bt)));
    }
    let per_event = (tributary::metrics::store_queries_total(store) as f64 - ops_before.values().sum::<u64>() as f64)
        / total.max(1) as f64;
    report.add("ingest", "statements_per_event", per_event, None);
    report.add("ingest", "events_applied", applied as f64, Some(total as f64));
    report.add("ingest", "events_failed_or_rejected", failed as f64, None);
    Ok(())
}
