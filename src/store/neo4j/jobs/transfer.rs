//! The jobs' and runs' part of `export` and `import` on Neo4j: the rows each record becomes and the
//! statements that write them back (split out of `store/neo4j/jobs.rs`).

use super::*;

// ---- export and import ----

/// Every job, run and dataset, in the embedded store's order.
pub(in crate::store::neo4j) async fn export_in(
    txn: &mut Txn,
) -> StoreResult<(Vec<Job>, Vec<Run>, Vec<(Id, IoEntry)>, Vec<(Id, IoEntry)>)> {
    let jobs = exec(txn, cypher!("job_export")).await?.decode::<JobProps>("job")?;
    let runs = exec(txn, cypher!("run_export")).await?.decode::<RunProps>("run")?;
    let job_io = exec(txn, cypher!("job_io_export")).await?.decode::<IoProps>("entry")?;
    let run_io = exec(txn, cypher!("run_io_export")).await?.decode::<IoProps>("entry")?;
    Ok((jobs, runs, job_io, run_io))
}

/// A `job_upsert` row creating an imported job with its id.
pub(in crate::store::neo4j) fn import_job_row(job: &Job) -> BoltType {
    upsert_row(true, "job", job_row(job))
}

pub(in crate::store::neo4j) fn import_run_row(run: &Run) -> BoltType {
    upsert_row(true, "run", run_row(run))
}

/// A `job_io_upsert` or `run_io_upsert` row of an imported dataset.
pub(in crate::store::neo4j) fn import_io_row(owner: Id, entry: &IoEntry) -> BoltType {
    io_row(owner, entry)
}

/// A `job_tie_imported_evidence` row for an imported evidence: the run its details name (their
/// `runId`), else the job they name (`job.namespace`, `job.name`: the evidence of a job event);
/// `None` when they name neither.
pub(in crate::store::neo4j) fn evidence_tie_row(e: &crate::domain::Evidence) -> Option<BoltType> {
    let details = e.details.as_ref()?;
    let text = |v: Option<&serde_json::Value>| v.and_then(|v| v.as_str()).map(str::to_string);
    let run_id = text(details.get("runId"));
    let job = details.get("job");
    let (namespace, name) = (text(job.and_then(|j| j.get("namespace"))), text(job.and_then(|j| j.get("name"))));
    if run_id.is_none() && (namespace.is_none() || name.is_none()) {
        return None;
    }
    Some(map([
        ("edge_id", e.edge_id.into()),
        ("key", e.key.clone().into()),
        ("run_id", run_id.into()),
        ("namespace", namespace.into()),
        ("name", name.into()),
    ]))
}

/// The statements an import writes jobs and runs with, in this order (jobs before their runs,
/// both before their datasets, the evidence ties last).
pub(in crate::store::neo4j) fn import_job_cmd() -> Cmd {
    cypher!("job_upsert")
}
pub(in crate::store::neo4j) fn import_run_cmd() -> Cmd {
    cypher!("run_upsert")
}
pub(in crate::store::neo4j) fn import_job_io_cmd() -> Cmd {
    cypher!("job_io_upsert")
}
pub(in crate::store::neo4j) fn import_run_io_cmd() -> Cmd {
    cypher!("run_io_upsert")
}
pub(in crate::store::neo4j) fn import_ties_cmd() -> Cmd {
    cypher!("job_tie_imported_evidence")
}
