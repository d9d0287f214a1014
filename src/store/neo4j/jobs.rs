//! Jobs and runs on Neo4j: `(:Job)` and `(:Run)` nodes, `record_run` (an event's job, run and
//! datasets folded in by `domain::jobs`'s rules, inside the event's transaction, as the embedded
//! store does) and the reads behind the GraphQL job and run fields, health and incidents.
//!
//! The graph a person sees in Neo4j Browser: `(:Job)-[:HAS_RUN]->(:Run)`, `(:Run)-[:READ]->(x)`
//! and `(:Run)-[:WROTE]->(x)` for a run's datasets, `(:Job)-[:READS]->(x)` and
//! `(:Job)-[:WRITES]->(x)` for the union over the job's runs and job events (x a `Container` or
//! an `External`), `CHILD_OF` from a job to its parent job and from a run to its parent run, and
//! `(:Evidence)-[:ASSERTED_BY]->(:Run)` (or `->(:Job)` for a job event's evidence). Every
//! relationship's facts are also properties (a job's `parent_id`, a run's `job_id` and
//! `parent_run_id`, a dataset's `end_key`, `container_id` or `fqn`), so the reads seek the
//! indexes the embedded store's queries use and answer in the same order.
//!
//! A run's states are one JSON text property, `[[state, at], ...]` as the embedded store keeps
//! them: read and written whole with the run. `began` (its start, else its first event) is
//! stored for ordering a job's runs.
//!
//! `record_run` costs at most eight statements whatever the event: the lookup (which locks the
//! job's and the run's keys), an id block when something is new, the jobs, the run, the job's
//! and the run's datasets (`UNWIND`), the completed writes of a COMPLETE run, and the evidence
//! tie. In a session (see `session`) the writes wait in the session's `JobsBuffer` and go out
//! once for all its events, the same six `UNWIND` statements; an event of a job and run the
//! session already met costs its id block at most. A chunk of OpenLineage events meets all its
//! jobs and runs at once before its first event (`Store::look_up_runs`: one locking
//! `job_record_lookup_many` for the chunk, the jobs and runs not stored noted as such), so its
//! events' `record_run` calls look up nothing.

use std::collections::HashMap;

use neo4rs::{BoltType, Txn};
use serde::Deserialize;

use super::rows::{list, map, parse_opt_ts, ts, Decode};
use super::tx::Tx;
use super::{decode_by_ids, exec, first_id, Cmd, Neo4jStore, Run as Runner};
use crate::domain::jobs::{merge_io, merge_job, merge_run, note_run};
use crate::domain::{
    End, Id, IoDirection, IoEntry, Job, JobFilter, JobName, JobUpsert, KnownRun, Page, PageRequest, Run, RunFilter,
    RunRecord, RunState, RunStateChange, Timestamp,
};
use crate::store::{ChunkJobs, StoreError, StoreResult};

pub(super) const JOB_COUNTER: &str = "job";
pub(super) const RUN_COUNTER: &str = "run";

fn required_ts(text: String, what: &str) -> StoreResult<Timestamp> {
    parse_opt_ts(Some(text))?.ok_or_else(|| StoreError::Internal(format!("no {what} in neo4j")))
}

// ---- rows ----

#[derive(Deserialize)]
pub(super) struct JobProps {
    id: Id,
    namespace: String,
    name: String,
    processing_type: Option<String>,
    integration: Option<String>,
    job_type: Option<String>,
    description: Option<String>,
    #[serde(default)]
    owners: Vec<String>,
    source_code_location: Option<String>,
    sql: Option<String>,
    parent_id: Option<Id>,
    root_id: Option<Id>,
    first_seen_at: String,
    last_seen_at: String,
    latest_run_id: Option<Id>,
    latest_run_began: Option<String>,
}

impl Decode for JobProps {
    type Out = Job;

    fn decode(self) -> StoreResult<Job> {
        let p = self;
        Ok(Job {
            id: p.id,
            namespace: p.namespace,
            name: p.name,
            processing_type: p.processing_type,
            integration: p.integration,
            job_type: p.job_type,
            description: p.description,
            owners: p.owners,
            source_code_location: p.source_code_location,
            sql: p.sql,
            parent_id: p.parent_id,
            root_id: p.root_id,
            first_seen_at: required_ts(p.first_seen_at, "job first_seen_at")?,
            last_seen_at: required_ts(p.last_seen_at, "job last_seen_at")?,
            latest_run_id: p.latest_run_id,
            latest_run_began: parse_opt_ts(p.latest_run_began)?,
        })
    }
}

/// Every property of a Job node (`SET j = row`).
fn job_row(j: &Job) -> BoltType {
    map([
        ("id", j.id.into()),
        ("namespace", j.namespace.clone().into()),
        ("name", j.name.clone().into()),
        // For `jobs(name:)`, a case-insensitive substring, as `name_lc` serves containers.
        ("name_lc", j.name.to_lowercase().into()),
        ("processing_type", j.processing_type.clone().into()),
        ("integration", j.integration.clone().into()),
        ("job_type", j.job_type.clone().into()),
        ("description", j.description.clone().into()),
        ("owners", j.owners.clone().into()),
        ("source_code_location", j.source_code_location.clone().into()),
        ("sql", j.sql.clone().into()),
        ("parent_id", j.parent_id.into()),
        ("root_id", j.root_id.into()),
        ("first_seen_at", ts(&j.first_seen_at).into()),
        ("last_seen_at", ts(&j.last_seen_at).into()),
        ("latest_run_id", j.latest_run_id.into()),
        ("latest_run_began", j.latest_run_began.as_ref().map(ts).into()),
    ])
}

#[derive(Deserialize)]
pub(super) struct RunProps {
    id: Id,
    run_id: String,
    job_id: Id,
    state: String,
    states: String,
    started_at: Option<String>,
    ended_at: Option<String>,
    nominal_start: Option<String>,
    nominal_end: Option<String>,
    error_message: Option<String>,
    error_language: Option<String>,
    parent_run_id: Option<String>,
    first_seen_at: String,
    last_seen_at: String,
}

/// States as stored: `[[state, at], ...]`, the embedded store's text.
fn states_text(states: &[RunStateChange]) -> String {
    serde_json::Value::Array(states.iter().map(|s| serde_json::json!([s.state.as_str(), ts(&s.at)])).collect())
        .to_string()
}

fn parse_states(text: &str) -> StoreResult<Vec<RunStateChange>> {
    let pairs: Vec<(String, String)> =
        serde_json::from_str(text).map_err(|e| StoreError::Internal(format!("bad run states in neo4j: {e}")))?;
    pairs
        .into_iter()
        .map(|(state, at)| {
            Ok(RunStateChange { state: RunState::stored(&state), at: required_ts(at, "run state time")? })
        })
        .collect()
}

impl Decode for RunProps {
    type Out = Run;

    fn decode(self) -> StoreResult<Run> {
        let p = self;
        Ok(Run {
            id: p.id,
            run_id: p.run_id,
            job_id: p.job_id,
            state: RunState::stored(&p.state),
            states: parse_states(&p.states)?,
            started_at: parse_opt_ts(p.started_at)?,
            ended_at: parse_opt_ts(p.ended_at)?,
            nominal_start: parse_opt_ts(p.nominal_start)?,
            nominal_end: parse_opt_ts(p.nominal_end)?,
            error_message: p.error_message,
            error_language: p.error_language,
            parent_run_id: p.parent_run_id,
            first_seen_at: required_ts(p.first_seen_at, "run first_seen_at")?,
            last_seen_at: required_ts(p.last_seen_at, "run last_seen_at")?,
        })
    }
}

/// Every property of a Run node (`SET r = row`).
fn run_row(r: &Run) -> BoltType {
    let t = |v: &Option<Timestamp>| -> BoltType { v.as_ref().map(ts).into() };
    map([
        ("id", r.id.into()),
        ("run_id", r.run_id.clone().into()),
        ("job_id", r.job_id.into()),
        ("state", r.state.as_str().into()),
        ("states", states_text(&r.states).into()),
        ("started_at", t(&r.started_at)),
        ("ended_at", t(&r.ended_at)),
        ("nominal_start", t(&r.nominal_start)),
        ("nominal_end", t(&r.nominal_end)),
        ("error_message", r.error_message.clone().into()),
        ("error_language", r.error_language.clone().into()),
        ("parent_run_id", r.parent_run_id.clone().into()),
        ("first_seen_at", ts(&r.first_seen_at).into()),
        ("last_seen_at", ts(&r.last_seen_at).into()),
        ("began", ts(&r.began()).into()),
    ])
}

/// A READS/WRITES or READ/WROTE relationship's properties, with its owner's id (the reads add
/// it) and its direction.
#[derive(Deserialize)]
pub(super) struct IoProps {
    #[serde(default)]
    owner: Id,
    direction: String,
    end_key: String,
    container_id: Option<Id>,
    fqn: Option<String>,
    namespace: String,
    name: String,
    at: String,
    completed_run_id: Option<Id>,
    completed_at: Option<String>,
}

impl Decode for IoProps {
    type Out = (Id, IoEntry);

    /// As the embedded store reads its `run_io`/`job_io` rows: a container end (a field's
    /// included) is its container, else the external asset.
    fn decode(self) -> StoreResult<(Id, IoEntry)> {
        let p = self;
        let end = match (p.container_id, p.fqn) {
            (Some(id), _) => End::Container { id },
            (None, Some(fqn)) => End::External { fqn },
            (None, None) => End::External { fqn: p.end_key.trim_start_matches("x:").to_string() },
        };
        let completed = match (p.completed_run_id, parse_opt_ts(p.completed_at)?) {
            (Some(run), Some(at)) => Some((run, at)),
            _ => None,
        };
        let entry = IoEntry {
            direction: IoDirection::parse(&p.direction).unwrap_or(IoDirection::Read),
            end,
            namespace: p.namespace,
            name: p.name,
            at: required_ts(p.at, "dataset time")?,
            completed,
        };
        Ok((p.owner, entry))
    }
}

/// An `*_io_upsert` row; `completed` only for a job's.
fn io_row(owner: Id, e: &IoEntry) -> BoltType {
    let (container_id, fqn) = match &e.end {
        End::Container { id } => (Some(*id), None),
        End::Field { container_id, .. } => (Some(*container_id), None),
        End::External { fqn } => (None, Some(fqn.clone())),
    };
    map([
        ("owner", owner.into()),
        ("direction", e.direction.as_str().into()),
        ("end_key", e.end.key().into()),
        ("container_id", container_id.into()),
        ("fqn", fqn.into()),
        ("namespace", e.namespace.clone().into()),
        ("name", e.name.clone().into()),
        ("at", ts(&e.at).into()),
        ("completed_run_id", e.completed.map(|(run, _)| run).into()),
        ("completed_at", e.completed.as_ref().map(|(_, at)| ts(at)).into()),
    ])
}

fn upsert_row(new: bool, key: &str, row: BoltType) -> BoltType {
    map([("new", new.into()), (key, row)])
}

// ---- record_run ----

/// One transaction (see the module); when a concurrent event of the same job or run created it
/// first (the uniqueness constraint refuses our CREATE), once more, now finding it. Outside a
/// session: in one, the event goes to the session's buffer instead (`Session::record_run`).
pub(super) async fn record_run(store: &Neo4jStore, record: RunRecord) -> StoreResult<()> {
    let record = std::sync::Arc::new(record);
    let first = record.clone();
    match write_txn!(store, |txn| record_run_in(txn, &first)) {
        Err(StoreError::Conflict(_)) => write_txn!(store, |txn| record_run_in(txn, &record)),
        other => other,
    }
}

/// Outside a session: the event through a buffer of its own, written at once; so both paths
/// run the same code.
async fn record_run_in(txn: &mut Tx<'_>, record: &RunRecord) -> StoreResult<()> {
    let mut buffer = JobsBuffer::default();
    buffer.record(txn, record).await?;
    buffer.flush(txn).await
}

fn name_row(n: &JobName) -> BoltType {
    map([("namespace", n.namespace.clone().into()), ("name", n.name.clone().into())])
}

/// A job as the session left it; `io`, its datasets, once read (the event's own job only).
#[derive(Clone)]
struct BufferedJob {
    job: Job,
    io: Option<Vec<IoEntry>>,
}

/// A run as the session left it, with its datasets.
#[derive(Clone)]
struct BufferedRun {
    run: Run,
    io: Vec<IoEntry>,
}

/// An evidence tie waiting (see `run_tie_evidence`, `job_tie_evidence`).
enum Tie {
    Run { id: Id, key: String, needle: String },
    Job { id: Id, key: String },
}

/// A session's job and run updates (`record_run`): the jobs and runs it touched as it left
/// them, so a run's later event in the session reads its job and run here, and the writes
/// waiting, each job, run and dataset row once however many events changed it, written in one
/// `UNWIND` statement per kind before the commit or before any read of jobs in the session
/// (`Neo4jStore::flush_jobs`). The locking lookup (`job_record_lookup`) still runs the first
/// time the session meets a job or run, so concurrent writers serialize on them as before.
#[derive(Default)]
pub(super) struct JobsBuffer {
    jobs: HashMap<JobName, BufferedJob>,
    job_names: HashMap<Id, JobName>,
    /// Jobs looked up and not stored (`look_up_chunk`), so their first event looks up nothing.
    absent_jobs: std::collections::HashSet<JobName>,
    /// By runId; `None` when looked up and not stored.
    runs: HashMap<String, Option<BufferedRun>>,
    run_ids: HashMap<Id, String>,
    /// Jobs and runs to write, in the order first changed, and whether each is new.
    job_writes: Vec<(Id, bool)>,
    run_writes: Vec<(Id, bool)>,
    /// Dataset rows to write, the latest per (owner, direction, end).
    job_io: std::collections::BTreeMap<(Id, IoDirection, String), IoEntry>,
    run_io: std::collections::BTreeMap<(Id, IoDirection, String), IoEntry>,
    /// COMPLETE runs' completed writes: (job, run, end).
    marks: Vec<(Id, Id, Timestamp)>,
    ties: Vec<Tie>,
}

/// `old` with `changed` (from `merge_io`) in place.
fn with_changes(old: &[IoEntry], changed: &[IoEntry]) -> Vec<IoEntry> {
    let mut out = old.to_vec();
    for e in changed {
        match out.iter_mut().find(|o| o.key() == e.key()) {
            Some(o) => *o = e.clone(),
            None => out.push(e.clone()),
        }
    }
    out
}

fn queue(writes: &mut Vec<(Id, bool)>, id: Id, new: bool) {
    if !writes.iter().any(|(w, _)| *w == id) {
        writes.push((id, new));
    }
}

impl JobsBuffer {
    fn put_job(&mut self, job: Job, io: Option<Vec<IoEntry>>, new: bool) {
        let name = JobName { namespace: job.namespace.clone(), name: job.name.clone() };
        queue(&mut self.job_writes, job.id, new);
        self.absent_jobs.remove(&name);
        self.job_names.insert(job.id, name.clone());
        self.jobs.insert(name, BufferedJob { job, io });
    }

    /// Reads (and locks) what the session has not met yet of the event's jobs and run.
    async fn look_up(&mut self, txn: &mut Txn, record: &RunRecord, names: &[&JobName]) -> StoreResult<()> {
        let upsert = &record.job;
        let run_key = record.run.as_ref().map(|r| r.run_id.clone());
        let known = names.iter().all(|n| self.jobs.contains_key(*n) || self.absent_jobs.contains(*n))
            && (self.jobs.get(&upsert.name).is_some_and(|j| j.io.is_some()) || self.absent_jobs.contains(&upsert.name))
            && run_key.as_ref().is_none_or(|k| self.runs.contains_key(k));
        if known {
            return Ok(());
        }
        let found = exec(
            txn,
            cypher!("job_record_lookup")
                .param("names", list(names.iter().map(|n| name_row(n)).collect()))
                .param("namespace", upsert.name.namespace.clone())
                .param("name", upsert.name.name.clone())
                .param("run_id", run_key.clone()),
        )
        .await?;
        let io_of = |column: &str| -> StoreResult<Vec<IoEntry>> {
            let rows: Vec<IoProps> = found.value(column)?;
            rows.into_iter().map(|p| p.decode().map(|(_, e)| e)).collect()
        };
        // What the session wrote is newer than what Neo4j holds: kept.
        for job in found.value::<Vec<JobProps>>("jobs")? {
            let job = job.decode()?;
            let name = JobName { namespace: job.namespace.clone(), name: job.name.clone() };
            self.job_names.insert(job.id, name.clone());
            self.jobs.entry(name).or_insert(BufferedJob { job, io: None });
        }
        if let Some(own) = self.jobs.get_mut(&upsert.name) {
            // No dataset of it was written in the session before it was read: Neo4j's are current.
            own.io.get_or_insert(io_of("job_io")?);
        }
        if let Some(key) = run_key {
            if !self.runs.contains_key(&key) {
                let run = found.value::<Option<RunProps>>("run")?.map(Decode::decode).transpose()?;
                let run = match run {
                    Some(run) => Some(BufferedRun { io: io_of("run_io")?, run }),
                    None => None,
                };
                if let Some(r) = &run {
                    self.run_ids.insert(r.run.id, key.clone());
                }
                self.runs.insert(key, run);
            }
        }
        Ok(())
    }

    /// `look_up` for a whole chunk of events at once (`job_record_lookup_many`): what the
    /// session has not met yet of the chunk's jobs and runs, read and locked in one statement;
    /// a job or run not stored is noted as such, so its first event looks up nothing either.
    pub(super) async fn look_up_chunk(&mut self, txn: &mut Txn, wanted: &ChunkJobs) -> StoreResult<()> {
        let met = |n: &JobName| self.jobs.contains_key(n) || self.absent_jobs.contains(n);
        let mut names: Vec<&JobName> = wanted.jobs.iter().chain(&wanted.related).filter(|n| !met(n)).collect();
        // The event's own jobs whose datasets the session has not read (a job met as a parent).
        let own: Vec<&JobName> = wanted
            .jobs
            .iter()
            .filter(|n| !self.absent_jobs.contains(*n) && self.jobs.get(*n).is_none_or(|j| j.io.is_none()))
            .collect();
        let mut run_ids: Vec<&String> = wanted.run_ids.iter().filter(|r| !self.runs.contains_key(*r)).collect();
        if names.is_empty() && own.is_empty() && run_ids.is_empty() {
            return Ok(());
        }
        // One order for every writer's locks.
        names.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        names.dedup();
        run_ids.sort();
        run_ids.dedup();
        let found = exec(
            txn,
            cypher!("job_record_lookup_many")
                .param("names", list(names.iter().map(|n| name_row(n)).collect()))
                .param("own", list(own.iter().map(|n| name_row(n)).collect()))
                .param("run_ids", run_ids.iter().map(|r| (*r).clone()).collect::<Vec<String>>()),
        )
        .await?;
        let decode_io = |rows: Vec<IoProps>| -> StoreResult<Vec<IoEntry>> {
            rows.into_iter().map(|p| p.decode().map(|(_, e)| e)).collect()
        };
        // What the session wrote is newer than what Neo4j holds: kept.
        for job in found.value::<Vec<JobProps>>("jobs")? {
            let job = job.decode()?;
            let name = JobName { namespace: job.namespace.clone(), name: job.name.clone() };
            self.job_names.insert(job.id, name.clone());
            self.jobs.entry(name).or_insert(BufferedJob { job, io: None });
        }
        for n in names {
            if !self.jobs.contains_key(n) {
                self.absent_jobs.insert(n.clone());
            }
        }
        for row in found.value::<Vec<OwnJobIo>>("job_io")? {
            let name = JobName { namespace: row.namespace, name: row.name };
            if let Some(own) = self.jobs.get_mut(&name) {
                // No dataset of it was written in the session before it was read: Neo4j's are current.
                if own.io.is_none() {
                    own.io = Some(decode_io(row.io)?);
                }
            }
        }
        let mut stored: HashMap<String, BufferedRun> = HashMap::new();
        for row in found.value::<Vec<RunWithIo>>("runs")? {
            let run = row.run.decode()?;
            stored.insert(run.run_id.clone(), BufferedRun { io: decode_io(row.io)?, run });
        }
        for key in run_ids {
            let run = stored.remove(key);
            if let Some(r) = &run {
                self.run_ids.insert(r.run.id, key.clone());
            }
            self.runs.insert(key.clone(), run);
        }
        Ok(())
    }

    /// Folds an event's job, run and datasets into the buffer (new jobs and runs get their ids
    /// now, in the order the embedded store gives them).
    pub(super) async fn record(&mut self, txn: &mut Tx<'_>, record: &RunRecord) -> StoreResult<()> {
        let upsert: &JobUpsert = &record.job;
        // Parent and root first, then the job: the order the embedded store creates them in, so
        // new jobs get their ids in the same order. A job naming itself as parent or root has none.
        let mut names: Vec<&JobName> = Vec::new();
        for n in [upsert.parent.as_ref(), upsert.root.as_ref()].into_iter().flatten() {
            if *n != upsert.name && !names.contains(&n) {
                names.push(n);
            }
        }
        names.push(&upsert.name);
        self.look_up(txn, record, &names).await?;

        let missing = names.iter().filter(|n| !self.jobs.contains_key(**n)).count();
        let old_run = record.run.as_ref().and_then(|r| self.runs.get(&r.run_id)).and_then(Option::as_ref).cloned();
        let new_run = record.run.is_some() && old_run.is_none();
        let ids = txn.allocate(&[(JOB_COUNTER, missing), (RUN_COUNTER, usize::from(new_run))]).await?;
        let mut next_job = if missing > 0 { first_id(&ids, JOB_COUNTER)? } else { 0 };

        // The parent and root jobs: their ids, creating the ones not stored (a job known only by name).
        let mut related: HashMap<&JobName, Id> = HashMap::new();
        for n in &names[..names.len() - 1] {
            let id = match self.jobs.get(*n) {
                Some(j) => j.job.id,
                None => {
                    let job = merge_job(None, &JobUpsert::named((*n).clone(), upsert.seen_at), next_job, None, None);
                    next_job += 1;
                    let id = job.id;
                    self.put_job(job, Some(Vec::new()), true);
                    id
                }
            };
            related.insert(*n, id);
        }
        let id_of = |n: &Option<JobName>| n.as_ref().and_then(|n| related.get(n).copied());
        let old_job = self.jobs.get(&upsert.name);
        let mut job = merge_job(old_job.map(|b| &b.job), upsert, next_job, id_of(&upsert.parent), id_of(&upsert.root));
        let new_job = old_job.is_none();
        let old_job_io = old_job.and_then(|b| b.io.clone()).unwrap_or_default();
        let job_changes = merge_io(&old_job_io, &record.io);

        let run = match &record.run {
            Some(run_upsert) => {
                let id = if new_run { first_id(&ids, RUN_COUNTER)? } else { 0 };
                let merged = merge_run(old_run.as_ref().map(|b| &b.run), run_upsert, id, job.id);
                note_run(&mut job, &merged);
                let old_io = old_run.map(|b| b.io).unwrap_or_default();
                let changes = merge_io(&old_io, &record.io);
                Some((merged, with_changes(&old_io, &changes), changes))
            }
            None => None,
        };

        let job_id = job.id;
        for e in &job_changes {
            self.job_io.insert((job_id, e.direction, e.end.key()), e.clone());
        }
        self.put_job(job, Some(with_changes(&old_job_io, &job_changes)), new_job);
        let Some((run, io, changes)) = run else {
            self.ties.push(Tie::Job { id: job_id, key: record.evidence_key.clone() });
            return Ok(());
        };
        for e in &changes {
            self.run_io.insert((run.id, e.direction, e.end.key()), e.clone());
        }
        if run.state == RunState::Complete {
            if let Some(ended) = run.ended_at {
                // What the run wrote, in this event or an earlier one, was last written completely now.
                self.marks.push((job_id, run.id, ended));
            }
        }
        let needle = format!("\"runId\":{}", serde_json::Value::from(run.run_id.clone()));
        self.ties.push(Tie::Run { id: run.id, key: record.evidence_key.clone(), needle });
        queue(&mut self.run_writes, run.id, new_run);
        self.run_ids.insert(run.id, run.run_id.clone());
        self.runs.insert(run.run_id.clone(), Some(BufferedRun { run, io }));
        Ok(())
    }

    /// The run by runId as the session left it, when the session wrote or read it.
    pub(super) fn known_run(&self, run_id: &str) -> Option<KnownRun> {
        let run = self.runs.get(run_id)?;
        Some(match run {
            Some(b) => KnownRun { run: Some(b.run.clone()), io: b.io.clone() },
            None => KnownRun::default(),
        })
    }

    /// Writes what waits, one statement per kind, in the order the statements depend on: jobs,
    /// runs (linked to their jobs), datasets, completed writes (which read the runs' datasets),
    /// evidence ties. What the session read stays known.
    pub(super) async fn flush(&mut self, txn: &mut Txn) -> StoreResult<()> {
        let jobs: Vec<BoltType> = std::mem::take(&mut self.job_writes)
            .into_iter()
            .filter_map(|(id, new)| {
                let job = &self.jobs.get(self.job_names.get(&id)?)?.job;
                Some(upsert_row(new, "job", job_row(job)))
            })
            .collect();
        if !jobs.is_empty() {
            exec(txn, cypher!("job_upsert").param("rows", list(jobs))).await?;
        }
        let runs: Vec<BoltType> = std::mem::take(&mut self.run_writes)
            .into_iter()
            .filter_map(|(id, new)| {
                let run = &self.runs.get(self.run_ids.get(&id)?)?.as_ref()?.run;
                Some(upsert_row(new, "run", run_row(run)))
            })
            .collect();
        if !runs.is_empty() {
            exec(txn, cypher!("run_upsert").param("rows", list(runs))).await?;
        }
        let job_io: Vec<BoltType> =
            std::mem::take(&mut self.job_io).into_iter().map(|((owner, _, _), e)| io_row(owner, &e)).collect();
        if !job_io.is_empty() {
            exec(txn, cypher!("job_io_upsert").param("rows", list(job_io))).await?;
        }
        let run_io: Vec<BoltType> =
            std::mem::take(&mut self.run_io).into_iter().map(|((owner, _, _), e)| io_row(owner, &e)).collect();
        if !run_io.is_empty() {
            exec(txn, cypher!("run_io_upsert").param("rows", list(run_io))).await?;
        }
        let mut marks = std::mem::take(&mut self.marks);
        // By end, the events' order kept among equal ends (see the statement).
        marks.sort_by_key(|(_, _, at)| *at);
        if !marks.is_empty() {
            let rows = marks
                .iter()
                .map(|(job, run, at)| {
                    map([("job_id", (*job).into()), ("run_id", (*run).into()), ("at", ts(at).into())])
                })
                .collect();
            exec(txn, cypher!("job_mark_completed").param("rows", list(rows))).await?;
        }
        let (mut run_ties, mut job_ties) = (Vec::new(), Vec::new());
        for tie in std::mem::take(&mut self.ties) {
            match tie {
                Tie::Run { id, key, needle } => {
                    run_ties.push(map([("id", id.into()), ("key", key.into()), ("needle", needle.into())]))
                }
                Tie::Job { id, key } => job_ties.push(map([("id", id.into()), ("key", key.into())])),
            }
        }
        if !run_ties.is_empty() {
            exec(txn, cypher!("run_tie_evidence").param("rows", list(run_ties))).await?;
        }
        if !job_ties.is_empty() {
            exec(txn, cypher!("job_tie_evidence").param("rows", list(job_ties))).await?;
        }
        Ok(())
    }
}

/// A stored job's datasets as `job_record_lookup_many` returns them.
#[derive(Deserialize)]
struct OwnJobIo {
    namespace: String,
    name: String,
    io: Vec<IoProps>,
}

/// A stored run with its datasets as `job_record_lookup_many` returns them.
#[derive(Deserialize)]
struct RunWithIo {
    run: RunProps,
    io: Vec<IoProps>,
}

/// `Store::look_up_runs` outside a session: the runs and their datasets in two reads (in one,
/// `Session::look_up_runs`).
pub(super) async fn look_up_runs(store: &Neo4jStore, wanted: &ChunkJobs) -> StoreResult<Vec<(String, KnownRun)>> {
    let runs = runs_by_run_ids(super::AutoCommit(store), &wanted.run_ids).await?;
    let ids: Vec<Id> = runs.iter().map(|r| r.id).collect();
    let mut io: HashMap<Id, Vec<IoEntry>> = HashMap::new();
    for (owner, e) in run_io(super::AutoCommit(store), &ids).await? {
        io.entry(owner).or_default().push(e);
    }
    let mut by_run_id: HashMap<String, KnownRun> = runs
        .into_iter()
        .map(|run| {
            let io = io.remove(&run.id).unwrap_or_default();
            (run.run_id.clone(), KnownRun { run: Some(run), io })
        })
        .collect();
    Ok(wanted.run_ids.iter().map(|r| (r.clone(), by_run_id.remove(r).unwrap_or_default())).collect())
}

// ---- reads ----

pub(super) async fn jobs_by_ids(db: impl Runner, ids: &[Id]) -> StoreResult<Vec<Job>> {
    decode_by_ids::<JobProps>(db, cypher!("job_by_ids"), ids, "job").await
}

pub(super) async fn job_by_name(mut db: impl Runner, namespace: &str, name: &str) -> StoreResult<Option<Job>> {
    let rows = db.run(cypher!("job_by_name").param("namespace", namespace).param("name", name)).await?;
    Ok(rows.decode::<JobProps>("job")?.into_iter().next())
}

pub(super) async fn child_jobs(db: impl Runner, ids: &[Id]) -> StoreResult<Vec<Job>> {
    decode_by_ids::<JobProps>(db, cypher!("job_children"), ids, "job").await
}

pub(super) async fn list_jobs(mut db: impl Runner, f: &JobFilter, page: PageRequest) -> StoreResult<Page<Job>> {
    let keys: Option<Vec<String>> =
        f.container_ids.as_ref().map(|ids| ids.iter().map(|id| End::Container { id: *id }.key()).collect());
    db.run(
        cypher!("job_list")
            .param("namespace", f.namespace.clone())
            .param("name", f.name.clone())
            .param("state", f.last_run_state.map(|s| s.as_str()))
            .param("keys", keys)
            .param("skip", page.offset())
            .param("limit", page.size),
    )
    .await?
    .page::<JobProps>(page)
}

pub(super) async fn runs_by_ids(db: impl Runner, ids: &[Id]) -> StoreResult<Vec<Run>> {
    decode_by_ids::<RunProps>(db, cypher!("run_by_ids"), ids, "run").await
}

fn distinct_strs(items: &[String]) -> Vec<String> {
    let set: std::collections::BTreeSet<&String> = items.iter().collect();
    set.into_iter().cloned().collect()
}

pub(super) async fn runs_by_run_ids(mut db: impl Runner, run_ids: &[String]) -> StoreResult<Vec<Run>> {
    if run_ids.is_empty() {
        return Ok(Vec::new());
    }
    db.run(cypher!("run_by_run_ids").param("run_ids", distinct_strs(run_ids))).await?.decode::<RunProps>("run")
}

pub(super) async fn child_runs(mut db: impl Runner, run_ids: &[String]) -> StoreResult<Vec<Run>> {
    if run_ids.is_empty() {
        return Ok(Vec::new());
    }
    db.run(cypher!("run_children").param("run_ids", distinct_strs(run_ids))).await?.decode::<RunProps>("run")
}

pub(super) async fn runs_of_job(
    mut db: impl Runner,
    job_id: Id,
    f: &RunFilter,
    page: PageRequest,
) -> StoreResult<Page<Run>> {
    db.run(
        cypher!("run_of_job")
            .param("job_id", job_id)
            .param("state", f.state.map(|s| s.as_str()))
            .param("since", f.since.as_ref().map(ts))
            .param("until", f.until.as_ref().map(ts))
            .param("skip", page.offset())
            .param("limit", page.size),
    )
    .await?
    .page::<RunProps>(page)
}

pub(super) async fn job_io(db: impl Runner, ids: &[Id]) -> StoreResult<Vec<(Id, IoEntry)>> {
    decode_by_ids::<IoProps>(db, cypher!("job_io"), ids, "entry").await
}

pub(super) async fn run_io(db: impl Runner, ids: &[Id]) -> StoreResult<Vec<(Id, IoEntry)>> {
    decode_by_ids::<IoProps>(db, cypher!("run_io"), ids, "entry").await
}

/// `Store::replace_io_end`: each `READ`, `WROTE`, `READS` or `WRITES` relationship to the
/// external asset is merged anew to the container (keeping its properties, its end's now the
/// container's) unless one is there already, and removed.
pub(super) async fn replace_io_end(txn: &mut Txn, from: &End, to: &End) -> StoreResult<u64> {
    let End::External { fqn } = from else { return Ok(0) };
    let Some(container_id) = to.container_id() else { return Ok(0) };
    let moved = exec(
        txn,
        cypher!("io_replace_end")
            .param("fqn", fqn.clone())
            .param("container_id", container_id)
            .param("to_key", to.key()),
    )
    .await?;
    let n: Vec<i64> = moved.column("moved")?;
    Ok(n.first().copied().unwrap_or(0).max(0) as u64)
}

/// `Store::replace_io_ends`: `replace_io_end` of each, then the change (the change log's
/// statement last, as everywhere: see `changes::record_in`).
pub(super) async fn replace_io_ends(
    txn: &mut Tx<'_>,
    from: &[End],
    to: &End,
    change: &[crate::domain::NewChange],
) -> StoreResult<u64> {
    let mut n = 0;
    for f in from {
        n += replace_io_end(txn, f, to).await?;
    }
    super::changes::record_in(txn, change).await?;
    Ok(n)
}

/// `Store::external_placeholders`, one auto-commit read (`external_placeholders.cypher`).
pub(super) async fn external_placeholders(
    mut db: impl Runner,
    needle: &str,
    source_type: &str,
) -> StoreResult<Vec<(String, String, String)>> {
    let rows = db
        .run(
            cypher!("external_placeholders")
                .param("needle", needle.to_string())
                .param("source_type", source_type.to_string()),
        )
        .await?;
    let (fqns, namespaces, names) =
        (rows.column::<String>("fqn")?, rows.column::<String>("namespace")?, rows.column::<String>("name")?);
    Ok(fqns.into_iter().zip(namespaces).zip(names).map(|((f, ns), n)| (f, ns, n)).collect())
}

pub(super) async fn jobs_of_ends(mut db: impl Runner, ends: &[End]) -> StoreResult<Vec<(Id, IoEntry)>> {
    if ends.is_empty() {
        return Ok(Vec::new());
    }
    let mut containers = Vec::new();
    let mut fqns = Vec::new();
    for end in ends {
        match end {
            End::Container { id } | End::Field { container_id: id, .. } => containers.push(*id),
            End::External { fqn } => fqns.push(fqn.clone()),
        }
    }
    let keys: Vec<String> = ends.iter().map(End::key).collect();
    db.run(
        cypher!("job_io_of_ends")
            .param("container_ids", super::distinct(&containers))
            .param("fqns", distinct_strs(&fqns))
            .param("keys", distinct_strs(&keys)),
    )
    .await?
    .decode::<IoProps>("entry")
}

pub(super) async fn failed_latest_runs(
    mut db: impl Runner,
    since: Option<Timestamp>,
    until: Option<Timestamp>,
    limit: i64,
) -> StoreResult<Vec<Run>> {
    // SQLite's `LIMIT` with a negative value means none.
    let limit = if limit < 0 { i64::MAX } else { limit };
    db.run(
        cypher!("run_failed_latest")
            .param("since", since.as_ref().map(ts))
            .param("until", until.as_ref().map(ts))
            .param("limit", limit),
    )
    .await?
    .decode::<RunProps>("run")
}

// ---- export and import: `jobs/transfer.rs` ----

mod transfer;
pub(super) use self::transfer::*;
