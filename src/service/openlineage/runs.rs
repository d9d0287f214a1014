//! What an event records about its job and run (`Store::record_run`, in the event's
//! transaction), and the datasets a run reported in its earlier events, which the event's table
//! edges unite with its own: Spark's DataSourceV2 writes send a run's inputs on START and its
//! outputs on COMPLETE, and the edge between them exists all the same (as Marquez unites a run's
//! inputs and outputs across its events).

use std::collections::{BTreeSet, HashSet};

use super::resolve::Resolver;
use super::Unresolved;
use crate::domain::{End, Id, IoDirection, IoEntry, JobName, JobUpsert, KnownRun, RunRecord, RunUpsert};
use crate::error::Result;
use crate::ingest::openlineage::{self as ol, Event, EventKind, RunState};
use crate::service::Lineage;

/// The datasets of a run's earlier events that this event does not name itself, as bare
/// datasets (inputs, outputs): the other halves of the run's table edges.
#[derive(Debug, Default)]
pub(super) struct PriorDatasets {
    pub(super) inputs: Vec<ol::Dataset>,
    pub(super) outputs: Vec<ol::Dataset>,
}

/// The run whose earlier events' datasets the event pairs with its own (`prior_datasets`): none
/// for a JobEvent, a FAIL or ABORT, whose edges are not asserted, or an event that names no
/// dataset to pair them with.
pub(super) fn prior_datasets_run(event: &Event) -> Option<&str> {
    let run_id = match (&event.kind, &event.run_id) {
        (EventKind::Run, Some(id)) => id,
        _ => return None,
    };
    if matches!(event.event_type, Some(RunState::Fail | RunState::Abort))
        || (event.inputs.is_empty() && event.outputs.is_empty())
    {
        return None;
    }
    Some(run_id)
}

/// The run's datasets from its earlier events (`known`: the run as stored, read when
/// `prior_datasets_run` names it; none for a new run).
pub(super) fn prior_datasets(event: &Event, known: Option<KnownRun>) -> PriorDatasets {
    let Some(known) = known else { return PriorDatasets::default() };
    let named = |list: &[ol::Dataset]| -> HashSet<(String, String)> {
        list.iter().map(|d| (d.namespace.clone(), d.name.clone())).collect()
    };
    let (mut seen_in, mut seen_out) = (named(&event.inputs), named(&event.outputs));
    let mut out = PriorDatasets::default();
    for e in known.io {
        let (seen, list) = match e.direction {
            IoDirection::Read => (&mut seen_in, &mut out.inputs),
            IoDirection::Wrote => (&mut seen_out, &mut out.outputs),
        };
        if seen.insert((e.namespace.clone(), e.name.clone())) {
            list.push(ol::Dataset { namespace: e.namespace, name: e.name, ..Default::default() });
        }
    }
    out
}

impl Lineage {
    /// Records the event's job and run (and the datasets it read and wrote) in its transaction.
    /// `resolver` has resolved the event's datasets already, so their ends come from its cache.
    pub(super) async fn record_job_and_run(
        &self,
        event: &Event,
        event_id: Id,
        evidence_key: &str,
        resolver: Option<&mut Resolver<'_>>,
    ) -> Result<()> {
        let Some(job) = &event.job else { return Ok(()) };
        let mut io = Vec::new();
        if let Some(resolver) = resolver {
            let mut ignored: BTreeSet<Unresolved> = BTreeSet::new();
            for (direction, list) in [(IoDirection::Read, &event.inputs), (IoDirection::Wrote, &event.outputs)] {
                for d in list {
                    for (end, _) in resolver.end(d, &mut ignored).await? {
                        if matches!(end, End::Container { .. } | End::External { .. }) {
                            io.push(IoEntry::new(direction, end, &d.namespace, &d.name, event.event_time));
                        }
                    }
                }
            }
        }
        self.store.record_run(run_record(event, job, event_id, evidence_key, io)).await?;
        Ok(())
    }
}

/// The note a store upgraded to jobs and runs carries until its stored events' jobs and runs
/// are recorded (written by each store's migration step; a new store has none).
const BACKFILL_DOC: (&str, &str) = ("meta", "jobs_backfill");
/// Events read and recorded per store session by the backfill.
const BACKFILL_BATCH: i64 = 500;

impl Lineage {
    /// Records the jobs and runs of every stored event that was applied or ignored, oldest
    /// first, when the store notes it has not yet (a store made before jobs and runs were
    /// recorded); then removes the note. Datasets resolve to what exists now, creating nothing.
    /// Returns how many events were read; 0 when there was nothing to do.
    pub async fn backfill_jobs_and_runs(&self, mut progress: impl FnMut(u64)) -> Result<u64> {
        let Some(note) = self.store.get_doc(BACKFILL_DOC.0, BACKFILL_DOC.1).await? else { return Ok(0) };
        if note.get("pending") != Some(&serde_json::Value::Bool(true)) {
            return Ok(0);
        }
        let limits = ol::Limits::default();
        let caller = crate::auth::Caller::system();
        let mut cursor = 0;
        let mut read = 0u64;
        loop {
            let batch = self.store.events_after(cursor, BACKFILL_BATCH).await?;
            let Some(last) = batch.last() else { break };
            cursor = last.id;
            let (session, lineage) = self.session().await;
            let datastores = lineage.store.list_datastores().await?;
            let mut resolver = Resolver::new(&lineage, &caller, datastores, Default::default());
            for stored in batch {
                read += 1;
                if !super::report::accepted(&stored.status) {
                    continue;
                }
                let Ok(event) = ol::validate(&stored.body, stored.received_at, &limits) else { continue };
                let Some(job) = &event.job else { continue };
                let key = super::job_key(event.kind, &job.namespace, &job.name);
                let io = existing_io(&mut resolver, &event).await?;
                lineage.store.record_run(run_record(&event, job, stored.id, &key, io)).await?;
            }
            if let Some(s) = session {
                s.commit_session().await?;
            }
            progress(read);
        }
        self.store.put_doc(BACKFILL_DOC.0, BACKFILL_DOC.1, serde_json::json!({"pending": false})).await?;
        Ok(read)
    }
}

/// The datasets an event read and wrote as they resolve now, creating nothing: its containers,
/// else the external asset its lineage is recorded under.
async fn existing_io(resolver: &mut Resolver<'_>, event: &Event) -> Result<Vec<IoEntry>> {
    let mut io = Vec::new();
    let mut ignored: BTreeSet<Unresolved> = BTreeSet::new();
    for (direction, list) in [(IoDirection::Read, &event.inputs), (IoDirection::Wrote, &event.outputs)] {
        for d in list {
            let ends = resolver.existing_ends(d, &mut ignored).await?;
            let containers: Vec<End> = ends.iter().filter(|(_, c)| c.is_some()).map(|(e, _)| e.clone()).collect();
            let chosen =
                if containers.is_empty() { ends.into_iter().map(|(e, _)| e).take(1).collect() } else { containers };
            io.extend(
                chosen.into_iter().map(|end| IoEntry::new(direction, end, &d.namespace, &d.name, event.event_time)),
            );
        }
    }
    Ok(io)
}

/// What an event says about its job and run.
fn run_record(event: &Event, job: &ol::JobRef, event_id: Id, evidence_key: &str, io: Vec<IoEntry>) -> RunRecord {
    let name = |j: &ol::JobRef| JobName { namespace: j.namespace.clone(), name: j.name.clone() };
    let f = &event.job_facets;
    let job = JobUpsert {
        name: name(job),
        processing_type: f.processing_type.clone(),
        integration: f.integration.clone(),
        job_type: f.job_type.clone(),
        description: f.description.clone(),
        owners: f.owners.clone(),
        source_code_location: f.source_code_location.clone(),
        sql: event.job_sql.clone(),
        parent: event.parent.as_ref().map(|p| name(&p.job)),
        root: event.parent.as_ref().and_then(|p| p.root.as_ref()).map(|r| name(&r.job)),
        seen_at: event.event_time,
    };
    let run = match (&event.kind, &event.run_id) {
        (EventKind::Run, Some(run_id)) => Some(RunUpsert {
            run_id: run_id.clone(),
            state: event.event_type.unwrap_or(RunState::Other),
            at: event.event_time,
            start: None,
            nominal_start: event.run_facets.nominal_start,
            nominal_end: event.run_facets.nominal_end,
            error_message: event.run_facets.error_message.clone(),
            error_language: event.run_facets.error_language.clone(),
            parent_run_id: event.parent.as_ref().map(|p| p.run_id.clone()),
        }),
        _ => None,
    };
    RunRecord { job, run, io, event_id, evidence_key: evidence_key.to_string() }
}
