//! The prior state a chunk of OpenLineage events needs, read once for the whole chunk before its
//! first event is applied (issue #44, item 1: "read the prior state the chunk needs in one read
//! per kind"), then kept current in memory as each event is applied:
//!
//! - the live evidence of every job key of the chunk (`Store::live_evidence_of_keys`): what a
//!   COMPLETE reconciles, a FAIL retires, and where each edge's `firstRunId` comes from;
//! - the stored events' states of every run a START, RUNNING or OTHER of the chunk names
//!   (`Store::runs_event_states`): whether it already failed or completed;
//! - every run of the chunk with its datasets (`Store::look_up_runs`), whose earlier events'
//!   datasets the run's later events pair with their own; on Neo4j the same statement looks up
//!   and locks the chunk's jobs and runs for the session's `record_run` calls, one statement for
//!   the chunk instead of one per new job or run.
//!
//! On Neo4j each of those was a round trip per event (`live_evidence_of_key`,
//! `run_event_states`, `run_by_run_ids` and `run_io`, `job_record_lookup`); now they are three
//! statements per chunk. The embedded store answers the same calls in process.
//!
//! An event must see exactly what it saw when each event read the store itself, so:
//! - evidence is updated precisely from what `apply_assertions` did: each assertion's evidence
//!   live on the edge the store gives its id (`Store::apply_assertions_with_ids`), the last one
//!   of an (edge, key) winning, then the retired (edge, key)s gone, the order the stores apply
//!   them in; a store that gives no ids makes the touched keys read again;
//! - a run's event states do not change while its chunk is applied (the chunk's outcomes are
//!   written at its end; the events before it were read), and the chunk's own FAILs and
//!   COMPLETEs are `Pending::failed_runs` and `completed_runs` as before;
//! - a run's datasets are read again after an event records the run (from the session's job
//!   buffer on both stores: no statement on Neo4j), so their order stays the store's.
//!
//! Only a chunk applied in a store session reads ahead: the session holds this process's writer
//! (the embedded store's only one; on Neo4j the session gate and the job and run locks), so
//! nothing else of this process writes between its events. Without one (the event-by-event
//! fallback after a failed session, a replay) every read goes to the store as before. A writer
//! in another process (a second replica on one Neo4j) that changes a job's evidence while a
//! chunk is applied was not serialized with an event's read before either (the read took no
//! lock); now the chunk works from what it read at its start, as each event did from its read.

use std::collections::{HashMap, HashSet};

use crate::domain::{AssertionBatch, Id, JobName, KnownRun};
use crate::ingest::openlineage::{Event, EventKind, RunState};
use crate::service::Lineage;
use crate::store::{ChunkJobs, PriorEvidence};

/// `(id, status, eventType)` of a run's stored events.
pub(super) type EventStates = Vec<(Id, String, Option<String>)>;

/// A chunk's prior state (see the module); `Default` reads nothing ahead.
#[derive(Default)]
pub(super) struct Prior {
    /// Read ahead for a chunk in a session: what it holds is current. Else it holds nothing.
    ahead: bool,
    /// Live evidence by job key, each list by edge id (as `live_evidence_of_key` answers).
    evidence: HashMap<String, Vec<PriorEvidence>>,
    states: HashMap<String, EventStates>,
    runs: HashMap<String, KnownRun>,
}

/// What a batch will do to evidence, noted before the store takes it: each assertion's
/// evidence (as `PriorEvidence` without its edge id, which the store gives) and the retired
/// (edge, key)s.
pub(super) struct Note {
    asserted: Vec<PriorEvidence>,
    retired: Vec<(Id, String)>,
}

/// The job keys, the starting runs and the jobs and runs a chunk's events need, each once, in
/// the order the events first name them.
pub(super) fn wanted(events: &[&Event]) -> (Vec<String>, Vec<String>, ChunkJobs) {
    let (mut keys, mut starting, mut jobs) = (Vec::new(), Vec::new(), ChunkJobs::default());
    let (mut seen_keys, mut seen_starting, mut seen_jobs, mut seen_runs) =
        (HashSet::new(), HashSet::new(), HashSet::new(), HashSet::new());
    for event in events {
        let Some(job) = &event.job else { continue };
        let key = super::job_key(event.kind, &job.namespace, &job.name);
        if seen_keys.insert(key.clone()) {
            keys.push(key);
        }
        let name = JobName { namespace: job.namespace.clone(), name: job.name.clone() };
        if seen_jobs.insert(name.clone()) {
            jobs.jobs.push(name);
        }
        if event.kind != EventKind::Run {
            continue;
        }
        let Some(run_id) = &event.run_id else { continue };
        if starts(event) && seen_starting.insert(run_id.clone()) {
            starting.push(run_id.clone());
        }
        if seen_runs.insert(run_id.clone()) {
            jobs.run_ids.push(run_id.clone());
        }
    }
    // Parents and roots (`runs::run_record`), once the own jobs are all known.
    for event in events {
        let Some(parent) = event.job.as_ref().and(event.parent.as_ref()) else { continue };
        for j in [Some(&parent.job), parent.root.as_ref().map(|r| &r.job)].into_iter().flatten() {
            let name = JobName { namespace: j.namespace.clone(), name: j.name.clone() };
            if !seen_jobs.contains(&name) && seen_jobs.insert(name.clone()) {
                jobs.related.push(name);
            }
        }
    }
    (keys, starting, jobs)
}

/// A START, RUNNING or OTHER (or untyped) RunEvent: one that asks whether its run ended.
pub(super) fn starts(event: &Event) -> bool {
    event.kind == EventKind::Run
        && matches!(event.event_type, Some(RunState::Start) | Some(RunState::Running) | Some(RunState::Other) | None)
}

impl Prior {
    /// Reads the prior state of a chunk's events, one call per kind side by side. When a read
    /// fails, nothing is read ahead and each event reads for itself (and meets the same
    /// trouble, which it reports as before).
    pub(super) async fn read(lineage: &Lineage, events: &[&Event]) -> Prior {
        let (keys, starting, jobs) = wanted(events);
        let store = &lineage.store;
        let (evidence, states, runs) = tokio::join!(
            async {
                match keys.is_empty() {
                    true => Ok(Vec::new()),
                    false => store.live_evidence_of_keys(&keys).await,
                }
            },
            async {
                match starting.is_empty() {
                    true => Ok(Vec::new()),
                    false => store.runs_event_states(&starting).await,
                }
            },
            async {
                match jobs.jobs.is_empty() {
                    true => Ok(Vec::new()),
                    false => store.look_up_runs(&jobs).await,
                }
            },
        );
        let (evidence, states, runs) = match (evidence, states, runs) {
            (Ok(e), Ok(s), Ok(r)) => (e, s, r),
            (e, s, r) => {
                let error = [e.err(), s.err(), r.err()].into_iter().flatten().next().map(|e| e.to_string());
                tracing::warn!(
                    error,
                    events = events.len(),
                    "reading a chunk's prior state failed; reading it per event"
                );
                return Prior::default();
            }
        };
        let mut prior = Prior { ahead: true, ..Prior::default() };
        prior.evidence = keys.into_iter().map(|k| (k, Vec::new())).collect();
        for e in evidence {
            prior.evidence.entry(e.key.clone()).or_default().push(e);
        }
        prior.states = starting.into_iter().map(|r| (r, Vec::new())).collect();
        for (run_id, id, status, event_type) in states {
            prior.states.entry(run_id).or_default().push((id, status, event_type));
        }
        prior.runs = runs.into_iter().collect();
        prior
    }

    /// The edges the chunk's job keys' live evidence is on, as read ahead.
    pub(super) fn evidence_edges(&self) -> Vec<Id> {
        let mut ids: Vec<Id> = self.evidence.values().flatten().map(|e| e.edge_id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The job key's live evidence when read ahead.
    pub(super) fn evidence(&self, key: &str) -> Option<Vec<PriorEvidence>> {
        self.evidence.get(key).cloned()
    }

    /// The run's stored event states when read ahead.
    pub(super) fn states(&self, run_id: &str) -> Option<EventStates> {
        self.states.get(run_id).cloned()
    }

    /// The run with its datasets when read ahead (and not recorded since).
    pub(super) fn run(&self, run_id: &str) -> Option<KnownRun> {
        self.runs.get(run_id).cloned()
    }

    /// Keeps what an event read for itself (something the chunk did not foresee), so later
    /// events find it; nothing when not reading ahead.
    pub(super) fn keep(
        &mut self,
        key: Option<(&str, &[PriorEvidence])>,
        states: Option<(&str, &EventStates)>,
        run: Option<(&str, &KnownRun)>,
    ) {
        if !self.ahead {
            return;
        }
        if let Some((k, v)) = key {
            self.evidence.entry(k.to_string()).or_insert_with(|| v.to_vec());
        }
        if let Some((r, s)) = states {
            self.states.entry(r.to_string()).or_insert_with(|| s.clone());
        }
        if let Some((r, k)) = run {
            self.runs.entry(r.to_string()).or_insert_with(|| k.clone());
        }
    }

    /// What `batch` will do to evidence, when read ahead.
    pub(super) fn note(&self, batch: &AssertionBatch) -> Option<Note> {
        if !self.ahead {
            return None;
        }
        let asserted = batch
            .assert
            .iter()
            .map(|a| {
                let mut p = PriorEvidence::of(&a.evidence, None);
                p.ends = Some((a.edge.source.key(), a.edge.target.key()));
                p
            })
            .collect();
        Some(Note { asserted, retired: batch.retire_evidence.clone() })
    }

    /// Follows what a batch the store applied did to evidence (see the module); `edge_ids` are
    /// its assertions' edges, in order.
    pub(super) fn applied(&mut self, note: Option<Note>, edge_ids: &[Id]) {
        let Some(Note { asserted, retired }) = note else { return };
        if edge_ids.len() != asserted.len() {
            // The store did not say which edges: the touched keys are read again.
            for key in asserted.iter().map(|a| &a.key).chain(retired.iter().map(|(_, k)| k)) {
                self.evidence.remove(key);
            }
            return;
        }
        let evidence = &mut self.evidence;
        fold(evidence, asserted, edge_ids, &retired);
    }

    /// An event recorded the run: its datasets are read again when next needed.
    pub(super) fn recorded(&mut self, run_id: Option<&str>) {
        if let Some(r) = run_id {
            self.runs.remove(r);
        }
    }
}

/// The evidence of the keys in `evidence` after a batch: each assertion's evidence live on its
/// edge (replacing the key's row on that edge, so the last of a batch wins), then the retired
/// (edge, key)s gone, as both stores apply a batch. Keys not in `evidence` are not followed.
fn fold(
    evidence: &mut HashMap<String, Vec<PriorEvidence>>,
    asserted: Vec<PriorEvidence>,
    edge_ids: &[Id],
    retired: &[(Id, String)],
) {
    for (mut row, &edge_id) in asserted.into_iter().zip(edge_ids) {
        let Some(rows) = evidence.get_mut(&row.key) else { continue };
        row.edge_id = edge_id;
        match rows.binary_search_by_key(&edge_id, |r| r.edge_id) {
            Ok(i) => rows[i] = row,
            Err(i) => rows.insert(i, row),
        }
    }
    for (edge_id, key) in retired {
        if let Some(rows) = evidence.get_mut(key) {
            rows.retain(|r| r.edge_id != *edge_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(edge_id: Id, key: &str, run: &str, first: &str, ends: (&str, &str)) -> PriorEvidence {
        PriorEvidence {
            edge_id,
            key: key.into(),
            run_id: Some(run.into()),
            first_run_id: Some(first.into()),
            ends: Some((ends.0.into(), ends.1.into())),
        }
    }

    #[test]
    fn a_batch_folds_into_the_evidence_as_the_stores_apply_it() {
        let mut evidence: HashMap<String, Vec<PriorEvidence>> = HashMap::new();
        evidence.insert("k".into(), vec![row(3, "k", "r1", "r1", ("a", "b")), row(7, "k", "r1", "r1", ("a", "c"))]);
        evidence.insert("other".into(), vec![row(7, "other", "x", "x", ("a", "c"))]);
        let asserted = vec![
            // A new edge, between the stored ones by id.
            row(0, "k", "r2", "r2", ("a", "d")),
            // Asserted again: its run moves, its first run stays what the batch says.
            row(0, "k", "r2", "r1", ("a", "b")),
            // The same (edge, key) twice in a batch: the last wins.
            row(0, "k", "r3", "r1", ("a", "b")),
            // A key the chunk does not follow.
            row(0, "unfollowed", "r2", "r2", ("a", "b")),
        ];
        let retired = vec![(7, "k".to_string()), (7, "other".to_string()), (99, "k".to_string())];
        fold(&mut evidence, asserted, &[5, 3, 3, 3], &retired);
        assert_eq!(evidence["k"], vec![row(3, "k", "r3", "r1", ("a", "b")), row(5, "k", "r2", "r2", ("a", "d"))]);
        assert!(evidence["other"].is_empty());
        assert!(!evidence.contains_key("unfollowed"));
    }

    #[test]
    fn without_edge_ids_the_touched_keys_are_read_again() {
        let mut prior = Prior { ahead: true, ..Prior::default() };
        prior.evidence.insert("k".into(), vec![row(3, "k", "r1", "r1", ("a", "b"))]);
        prior.evidence.insert("untouched".into(), Vec::new());
        let note = Note { asserted: vec![row(0, "k", "r2", "r2", ("a", "d"))], retired: Vec::new() };
        prior.applied(Some(note), &[]);
        assert_eq!(prior.evidence("k"), None);
        assert_eq!(prior.evidence("untouched"), Some(Vec::new()));
    }
}
