//! Jobs and runs in the embedded store: the `jobs`, `runs`, `run_io` and `job_io` tables (see
//! `schema`), `record_run` (an event's job, run and datasets folded in by `domain::jobs`'s
//! rules, inside the event's transaction) and the reads behind the GraphQL job and run fields,
//! health and incidents.
//!
//! A run's states are one JSON column: they are read and written whole with the run, and a run
//! reports a handful. A job keeps its latest run's id and start, so "the latest run of each
//! job" and `jobs(lastRunState:)` are a join on a key instead of a search per job.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::LazyLock;

use rusqlite::types::Value as SqlValue;
use rusqlite::{params, Connection, OptionalExtension, Row};

use super::rows::{distinct_ids, distinct_strs, json_text, parse_ts, ts};
use super::{select_page, select_rows, sql_err, Filter, Listing, STORE};
use crate::domain::jobs::{merge_io, merge_job, merge_run, note_run};
use crate::domain::{
    End, Id, IoDirection, IoEntry, Job, JobFilter, JobName, JobUpsert, KnownRun, Page, PageRequest, Run, RunFilter,
    RunRecord, RunState, RunStateChange, RunUpsert, Timestamp,
};
use crate::metrics::store_query;
use crate::store::StoreResult;

const JOB_COLS: &str = "id, namespace, name, processing_type, integration, job_type, description, owners, \
    source_code_location, sql, parent_id, root_id, first_seen_at, last_seen_at, latest_run_id, latest_run_began";
pub(super) const RUN_COLS: &str =
    "id, run_id, job_id, state, states, started_at, ended_at, nominal_start, nominal_end, \
    error_message, error_language, parent_run_id, first_seen_at, last_seen_at";
const IO_COLS: &str = "direction, end_key, container_id, fqn, namespace, name, at";

fn conversion(e: impl std::error::Error + Send + Sync + 'static) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
}

fn required_ts(s: String) -> rusqlite::Result<Timestamp> {
    parse_ts(Some(s))?.ok_or(rusqlite::Error::InvalidQuery)
}

fn job_row(r: &Row) -> rusqlite::Result<Job> {
    let owners: String = r.get(7)?;
    Ok(Job {
        id: r.get(0)?,
        namespace: r.get(1)?,
        name: r.get(2)?,
        processing_type: r.get(3)?,
        integration: r.get(4)?,
        job_type: r.get(5)?,
        description: r.get(6)?,
        owners: serde_json::from_str(&owners).map_err(conversion)?,
        source_code_location: r.get(8)?,
        sql: r.get(9)?,
        parent_id: r.get(10)?,
        root_id: r.get(11)?,
        first_seen_at: required_ts(r.get(12)?)?,
        last_seen_at: required_ts(r.get(13)?)?,
        latest_run_id: r.get(14)?,
        latest_run_began: parse_ts(r.get(15)?)?,
    })
}

/// States as stored: `[[state, at], ...]`.
fn states_text(states: &[RunStateChange]) -> String {
    json_text(&serde_json::Value::Array(
        states.iter().map(|s| serde_json::json!([s.state.as_str(), ts(&s.at)])).collect(),
    ))
}

fn parse_states(text: &str) -> rusqlite::Result<Vec<RunStateChange>> {
    let pairs: Vec<(String, String)> = serde_json::from_str(text).map_err(conversion)?;
    pairs
        .into_iter()
        .map(|(state, at)| Ok(RunStateChange { state: RunState::stored(&state), at: required_ts(at)? }))
        .collect()
}

pub(super) fn run_row(r: &Row) -> rusqlite::Result<Run> {
    let states: String = r.get(4)?;
    Ok(Run {
        id: r.get(0)?,
        run_id: r.get(1)?,
        job_id: r.get(2)?,
        state: RunState::stored(&r.get::<_, String>(3)?),
        states: parse_states(&states)?,
        started_at: parse_ts(r.get(5)?)?,
        ended_at: parse_ts(r.get(6)?)?,
        nominal_start: parse_ts(r.get(7)?)?,
        nominal_end: parse_ts(r.get(8)?)?,
        error_message: r.get(9)?,
        error_language: r.get(10)?,
        parent_run_id: r.get(11)?,
        first_seen_at: required_ts(r.get(12)?)?,
        last_seen_at: required_ts(r.get(13)?)?,
    })
}

/// An `IO_COLS` row from column `at` on.
fn io_row(r: &Row, at: usize) -> rusqlite::Result<IoEntry> {
    let direction: String = r.get(at)?;
    let key: String = r.get(at + 1)?;
    let container: Option<Id> = r.get(at + 2)?;
    let fqn: Option<String> = r.get(at + 3)?;
    let end = match (container, fqn) {
        (Some(id), _) => End::Container { id },
        (None, Some(fqn)) => End::External { fqn },
        (None, None) => End::External { fqn: key.trim_start_matches("x:").to_string() },
    };
    Ok(IoEntry {
        direction: IoDirection::parse(&direction).unwrap_or(IoDirection::Read),
        end,
        namespace: r.get(at + 4)?,
        name: r.get(at + 5)?,
        at: required_ts(r.get(at + 6)?)?,
        completed: None,
    })
}

fn end_columns(end: &End) -> (Option<Id>, Option<&str>) {
    match end {
        End::Container { id } => (Some(*id), None),
        End::Field { container_id, .. } => (Some(*container_id), None),
        End::External { fqn } => (None, Some(fqn.as_str())),
    }
}

/// `Store::replace_io_end`. `run_io` is keyed by run, so the runs are those of the jobs that
/// list either end (every run's datasets are its job's too).
pub(super) fn replace_io_end(c: &Connection, from: &End, to: &End) -> rusqlite::Result<u64> {
    store_query(STORE, "replace_io_end");
    let (from_key, to_key) = (from.key(), to.key());
    let (container_id, fqn) = end_columns(to);
    let runs = "SELECT id FROM runs WHERE job_id IN (SELECT job_id FROM job_io WHERE end_key IN (?1, ?2))";
    let mut n = c.execute(
        &format!(
            "DELETE FROM run_io WHERE run_id IN ({runs}) AND end_key = ?1 AND EXISTS
               (SELECT 1 FROM run_io o WHERE o.run_id = run_io.run_id AND o.direction = run_io.direction AND o.end_key = ?2)"
        ),
        params![from_key, to_key],
    )?;
    n += c.execute(
        &format!(
            "UPDATE run_io SET end_key = ?2, container_id = ?3, fqn = ?4 WHERE run_id IN ({runs}) AND end_key = ?1"
        ),
        params![from_key, to_key, container_id, fqn],
    )?;
    n += c.execute(
        "DELETE FROM job_io WHERE end_key = ?1 AND EXISTS
           (SELECT 1 FROM job_io o WHERE o.job_id = job_io.job_id AND o.direction = job_io.direction AND o.end_key = ?2)",
        params![from_key, to_key],
    )?;
    n += c.execute(
        "UPDATE job_io SET end_key = ?2, container_id = ?3, fqn = ?4 WHERE end_key = ?1",
        params![from_key, to_key, container_id, fqn],
    )?;
    Ok(n as u64)
}

/// `Store::external_placeholders`: the job datasets' external ends (with the dataset as sent)
/// and the live edges' external ends, whose fqn contains the needle. `job_io` has no index on
/// its fqn, so this reads every job dataset: registration's price, not ingest's.
pub(super) fn external_placeholders(
    c: &Connection,
    needle: &str,
    source_type: &str,
) -> rusqlite::Result<Vec<(String, String, String)>> {
    select_rows(
        c,
        "external_placeholders",
        "SELECT fqn, namespace, name FROM job_io WHERE fqn IS NOT NULL AND instr(unicode_lower(fqn), ?1) > 0
         UNION SELECT source_fqn, '', '' FROM edges
           WHERE source_kind = 'x' AND retired_at IS NULL AND source_type = ?2 AND instr(unicode_lower(source_fqn), ?1) > 0
         UNION SELECT target_fqn, '', '' FROM edges
           WHERE target_kind = 'x' AND retired_at IS NULL AND source_type = ?2 AND instr(unicode_lower(target_fqn), ?1) > 0
         ORDER BY 1, 2, 3",
        params![needle, source_type],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

fn job_by_name_tx(c: &Connection, name: &JobName) -> rusqlite::Result<Option<Job>> {
    store_query(STORE, "job_by_name");
    c.prepare_cached(&format!("SELECT {JOB_COLS} FROM jobs WHERE namespace = ?1 AND name = ?2"))?
        .query_row(params![name.namespace, name.name], job_row)
        .optional()
}

/// How a job or run row is written. An UPDATE that names an indexed column rewrites that index's
/// entry even when the value is the same (SQLite decides by the SET list), so the usual update
/// leaves the keys out (`jobs(namespace, name)` and `parent_id`; `runs(run_id)`, `job_id`,
/// `began` and `parent_run_id`) and names them only when they moved. (The parameters it does
/// not name stay unbound-equivalent: SQLite counts up to the highest one used.)
#[derive(Clone, Copy, PartialEq, Eq)]
enum Write {
    Insert,
    Update,
    UpdateKeys,
}

fn write_job(c: &Connection, job: &Job, how: Write) -> rusqlite::Result<Id> {
    store_query(STORE, "upsert_job");
    let owners = json_text(&serde_json::Value::from(job.owners.clone()));
    let p = params![
        job.namespace,
        job.name,
        job.processing_type,
        job.integration,
        job.job_type,
        job.description,
        owners,
        job.source_code_location,
        job.sql,
        job.parent_id,
        job.root_id,
        ts(&job.first_seen_at),
        ts(&job.last_seen_at),
        job.latest_run_id,
        job.latest_run_began.as_ref().map(ts),
        job.id,
    ];
    let sql = match how {
        Write::Insert => {
            c.prepare_cached(
                "INSERT INTO jobs (namespace, name, processing_type, integration, job_type, description, owners,
                   source_code_location, sql, parent_id, root_id, first_seen_at, last_seen_at, latest_run_id,
                   latest_run_began, id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, NULLIF(?16, 0))",
            )?
            .execute(p)?;
            return Ok(c.last_insert_rowid());
        }
        Write::Update => {
            "UPDATE jobs SET processing_type = ?3, integration = ?4, job_type = ?5, description = ?6, owners = ?7,
               source_code_location = ?8, sql = ?9, root_id = ?11, first_seen_at = ?12, last_seen_at = ?13,
               latest_run_id = ?14, latest_run_began = ?15
              WHERE id = ?16"
        }
        Write::UpdateKeys => {
            "UPDATE jobs SET namespace = ?1, name = ?2, processing_type = ?3, integration = ?4, job_type = ?5,
               description = ?6, owners = ?7, source_code_location = ?8, sql = ?9, parent_id = ?10, root_id = ?11,
               first_seen_at = ?12, last_seen_at = ?13, latest_run_id = ?14, latest_run_began = ?15
             WHERE id = ?16"
        }
    };
    c.prepare_cached(sql)?.execute(p)?;
    Ok(job.id)
}

/// The job `upsert` names merged with the stored one (parent and root jobs created first when
/// missing), and how the caller is to write it: a new job is inserted here (its id is needed)
/// and is then `Update`d; an existing one is written once by the caller, after its latest run
/// is noted (`UpdateKeys` when its parent moved).
fn merged_job(c: &Connection, buffer: &mut JobsBuffer, upsert: &JobUpsert) -> rusqlite::Result<(Job, bool, Write)> {
    let mut related = |name: &Option<JobName>| -> rusqlite::Result<Option<Id>> {
        match name {
            Some(n) if *n != upsert.name => match buffer.job_by_name(c, n)? {
                Some(j) => Ok(Some(j.id)),
                None => {
                    let job = merge_job(None, &JobUpsert::named(n.clone(), upsert.seen_at), 0, None, None);
                    Ok(Some(buffer.insert_job(c, job)?.id))
                }
            },
            _ => Ok(None),
        }
    };
    let parent = related(&upsert.parent)?;
    let root = related(&upsert.root)?;
    let old = buffer.job_by_name(c, &upsert.name)?;
    let job = merge_job(old.as_ref(), upsert, 0, parent, root);
    let (job, how) = match &old {
        None => (buffer.insert_job(c, job)?, Write::Update),
        Some(o) if o.parent_id != job.parent_id => (job, Write::UpdateKeys),
        Some(_) => (job, Write::Update),
    };
    Ok((job, old.is_none(), how))
}

fn write_run(c: &Connection, run: &Run, how: Write) -> rusqlite::Result<Id> {
    store_query(STORE, "upsert_run");
    let p = params![
        run.run_id,
        run.job_id,
        run.state.as_str(),
        states_text(&run.states),
        run.started_at.as_ref().map(ts),
        run.ended_at.as_ref().map(ts),
        run.nominal_start.as_ref().map(ts),
        run.nominal_end.as_ref().map(ts),
        run.error_message,
        run.error_language,
        run.parent_run_id,
        ts(&run.first_seen_at),
        ts(&run.last_seen_at),
        ts(&run.began()),
        run.id,
    ];
    let sql = match how {
        Write::Insert => {
            c.prepare_cached(
                "INSERT INTO runs (run_id, job_id, state, states, started_at, ended_at, nominal_start, nominal_end,
                   error_message, error_language, parent_run_id, first_seen_at, last_seen_at, began, id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, NULLIF(?15, 0))",
            )?
            .execute(p)?;
            return Ok(c.last_insert_rowid());
        }
        Write::Update => {
            "UPDATE runs SET state = ?3, states = ?4, started_at = ?5, ended_at = ?6, nominal_start = ?7,
               nominal_end = ?8, error_message = ?9, error_language = ?10, first_seen_at = ?12, last_seen_at = ?13
              WHERE id = ?15"
        }
        Write::UpdateKeys => {
            "UPDATE runs SET run_id = ?1, job_id = ?2, state = ?3, states = ?4, started_at = ?5, ended_at = ?6,
               nominal_start = ?7, nominal_end = ?8, error_message = ?9, error_language = ?10, parent_run_id = ?11,
               first_seen_at = ?12, last_seen_at = ?13, began = ?14
             WHERE id = ?15"
        }
    };
    c.prepare_cached(sql)?.execute(p)?;
    Ok(run.id)
}

/// Rows written by one io upsert statement at most (one statement per distinct count is cached).
const IO_ROWS_PER_STATEMENT: usize = 8;

/// Which io table a row goes to.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum IoTable {
    Job,
    Run,
}

impl IoTable {
    /// The upsert of `rows` rows (1 to `IO_ROWS_PER_STATEMENT`), built once per process: building
    /// it per call was a tenth of recording a run.
    fn upsert_sql(self, rows: usize) -> &'static str {
        fn build(table: &str, owner_col: &str) -> Vec<String> {
            (1..=IO_ROWS_PER_STATEMENT)
                .map(|n| {
                    let tuples: Vec<String> = (0..n)
                        .map(|i| {
                            let params: Vec<String> = (1..=8).map(|k| format!("?{}", i * 8 + k)).collect();
                            format!("({})", params.join(", "))
                        })
                        .collect();
                    format!(
                        "INSERT INTO {table} ({owner_col}, {IO_COLS}) VALUES {}
                         ON CONFLICT ({owner_col}, direction, end_key) DO UPDATE SET
                           container_id = excluded.container_id, fqn = excluded.fqn, namespace = excluded.namespace,
                           name = excluded.name, at = excluded.at
                         WHERE excluded.at > {table}.at",
                        tuples.join(", ")
                    )
                })
                .collect()
        }
        static JOB: LazyLock<Vec<String>> = LazyLock::new(|| build("job_io", "job_id"));
        static RUN: LazyLock<Vec<String>> = LazyLock::new(|| build("run_io", "run_id"));
        let all = match self {
            IoTable::Job => &*JOB,
            IoTable::Run => &*RUN,
        };
        &all[rows - 1]
    }
}

/// Upserts io rows into `table` for `owner`: a row is written when new or when it is later than
/// the stored one (`merge_io`'s rule, in the statement, so no read comes first). One statement
/// per `IO_ROWS_PER_STATEMENT` rows.
fn upsert_io(c: &Connection, table: IoTable, owner: Id, rows: &[IoEntry]) -> rusqlite::Result<()> {
    for chunk in rows.chunks(IO_ROWS_PER_STATEMENT) {
        store_query(STORE, "upsert_io");
        let mut stmt = c.prepare_cached(table.upsert_sql(chunk.len()))?;
        let mut values: Vec<SqlValue> = Vec::with_capacity(chunk.len() * 8);
        for e in chunk {
            let (container, fqn) = end_columns(&e.end);
            values.extend([
                SqlValue::Integer(owner),
                SqlValue::Text(e.direction.as_str().to_string()),
                SqlValue::Text(e.end.key()),
                container.map_or(SqlValue::Null, SqlValue::Integer),
                fqn.map_or(SqlValue::Null, |f| SqlValue::Text(f.to_string())),
                SqlValue::Text(e.namespace.clone()),
                SqlValue::Text(e.name.clone()),
                SqlValue::Text(ts(&e.at)),
            ]);
        }
        stmt.execute(rusqlite::params_from_iter(values))?;
    }
    Ok(())
}

/// Job and run updates of a store session, written once when it commits (or before a read of
/// their tables): a run's START and COMPLETE in one request write its row, its datasets and its
/// job once instead of twice, and the second event reads them from here. A new job or run is
/// inserted at once (its id is needed). Outside a session a call gets its own, flushed at its end.
/// Everything here is the stored row with the session's events merged in, and `write` says
/// whether that is still to be written.
#[derive(Default)]
pub(super) struct JobsBuffer {
    // Boxed: a table of wide entries grown a few times per request cost a third of recording
    // its runs in fresh pages (rehashing moves pointers instead).
    jobs: HashMap<JobName, Box<(Job, Option<Write>)>>,
    runs: HashMap<String, Box<BufferedRun>>,
    /// Runs read and not stored, until they are inserted: their second event reads nothing.
    absent: HashSet<String>,
    /// Dataset rows to upsert, the latest of each key.
    io: BTreeMap<(IoTable, Id, IoDirection, String), IoEntry>,
    /// Completed writes to mark after the rows exist: (job, run, ended, keys written).
    marks: Vec<(Id, Id, Timestamp, BTreeSet<String>)>,
}

struct BufferedRun {
    run: Run,
    io: Vec<IoEntry>,
    write: Option<Write>,
}

/// Two pending writes of one row as one: the keys are named when either moved them.
fn combined(pending: Option<Write>, how: Write) -> Option<Write> {
    match (pending, how) {
        (_, Write::Insert) => pending,
        (Some(Write::UpdateKeys), _) | (_, Write::UpdateKeys) => Some(Write::UpdateKeys),
        _ => Some(Write::Update),
    }
}

impl JobsBuffer {
    fn job_by_name(&mut self, c: &Connection, name: &JobName) -> rusqlite::Result<Option<Job>> {
        if let Some(entry) = self.jobs.get(name) {
            return Ok(Some(entry.0.clone()));
        }
        let job = job_by_name_tx(c, name)?;
        if let Some(j) = &job {
            self.jobs.insert(name.clone(), Box::new((j.clone(), None)));
        }
        Ok(job)
    }

    /// Inserts a new job now (its id is needed) and keeps it.
    fn insert_job(&mut self, c: &Connection, mut job: Job) -> rusqlite::Result<Job> {
        job.id = write_job(c, &job, Write::Insert)?;
        self.jobs.insert(
            JobName { namespace: job.namespace.clone(), name: job.name.clone() },
            Box::new((job.clone(), None)),
        );
        Ok(job)
    }

    fn put_job(&mut self, job: Job, how: Write) {
        let name = JobName { namespace: job.namespace.clone(), name: job.name.clone() };
        let pending = self.jobs.get(&name).and_then(|j| j.1);
        self.jobs.insert(name, Box::new((job, combined(pending, how))));
    }

    /// A run by its OpenLineage id with its datasets, from here or (then kept) from the store.
    pub(super) fn known_run(&mut self, c: &Connection, run_id: &str) -> rusqlite::Result<KnownRun> {
        if let Some(r) = self.runs.get(run_id) {
            return Ok(KnownRun { run: Some(r.run.clone()), io: r.io.clone() });
        }
        if self.absent.contains(run_id) {
            return Ok(KnownRun::default());
        }
        let known = run_with_io(c, run_id)?;
        match &known.run {
            Some(run) => {
                let entry = BufferedRun { run: run.clone(), io: known.io.clone(), write: None };
                self.runs.insert(run_id.to_string(), Box::new(entry));
            }
            None => {
                self.absent.insert(run_id.to_string());
            }
        }
        Ok(known)
    }

    /// Dataset rows to upsert for `owner`, each kept when later than what is queued for its key.
    fn queue_io(&mut self, table: IoTable, owner: Id, rows: &[IoEntry]) {
        for e in rows {
            match self.io.entry((table, owner, e.direction, e.end.key())) {
                std::collections::btree_map::Entry::Occupied(mut o) => {
                    if e.at > o.get().at {
                        o.insert(e.clone());
                    }
                }
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(e.clone());
                }
            }
        }
    }

    /// Writes what is pending: each job and run row once, the dataset rows, then the marks.
    pub(super) fn flush(&mut self, c: &Connection) -> rusqlite::Result<()> {
        for entry in self.jobs.values_mut() {
            if let Some(how) = entry.1.take() {
                write_job(c, &entry.0, how)?;
            }
        }
        for r in self.runs.values_mut() {
            if let Some(how) = r.write.take() {
                write_run(c, &r.run, how)?;
            }
        }
        let io = std::mem::take(&mut self.io);
        let mut rows: Vec<IoEntry> = Vec::new();
        let mut owner: Option<(IoTable, Id)> = None;
        for ((table, id, _, _), e) in io {
            if owner.is_some_and(|o| o != (table, id)) {
                if let Some((t, o)) = owner {
                    upsert_io(c, t, o, &rows)?;
                }
                rows.clear();
            }
            owner = Some((table, id));
            rows.push(e);
        }
        if let Some((t, o)) = owner {
            upsert_io(c, t, o, &rows)?;
        }
        for (job, run, ended, keys) in std::mem::take(&mut self.marks) {
            mark_completed_writes(c, job, run, &ended, &keys)?;
        }
        Ok(())
    }
}

pub(super) fn record_run(c: &Connection, buffer: &mut JobsBuffer, record: &RunRecord) -> StoreResult<()> {
    record_run_tx(c, buffer, record).map_err(sql_err)
}

fn record_run_tx(c: &Connection, buffer: &mut JobsBuffer, record: &RunRecord) -> rusqlite::Result<()> {
    let (mut job, new_job, how) = merged_job(c, buffer, &record.job)?;
    buffer.queue_io(IoTable::Job, job.id, &record.io);
    let Some(upsert) = &record.run else {
        if !new_job {
            buffer.put_job(job, how);
        }
        return Ok(());
    };
    let run = fold_run(c, buffer, record, upsert, job.id)?;
    let latest = (job.latest_run_id, job.latest_run_began);
    note_run(&mut job, &run.run);
    // One write of the job per event: its merge and its latest run together (a new job was
    // inserted before its run, and is written again only when the run is its latest).
    if !new_job || (job.latest_run_id, job.latest_run_began) != latest {
        buffer.put_job(job.clone(), how);
    }
    if run.run.state == RunState::Complete {
        if let Some(ended) = run.run.ended_at {
            let written = run.io.iter().filter(|e| e.direction == IoDirection::Wrote).map(|e| e.end.key()).collect();
            buffer.marks.push((job.id, run.run.id, ended, written));
        }
    }
    Ok(())
}

/// What the run wrote, in this event or an earlier one (`keys`), was last written completely at
/// `ended`: the rows are updated by key.
fn mark_completed_writes(
    c: &Connection,
    job_id: Id,
    run_id: Id,
    ended: &Timestamp,
    keys: &BTreeSet<String>,
) -> rusqlite::Result<()> {
    let ended = ts(ended);
    for key in keys {
        store_query(STORE, "mark_completed_write");
        c.prepare_cached(
            "UPDATE job_io SET completed_run_id = ?2, completed_at = ?3
             WHERE job_id = ?1 AND direction = 'wrote' AND end_key = ?4
               AND (completed_at IS NULL OR completed_at <= ?3)",
        )?
        .execute(params![job_id, run_id, ended, key])?;
    }
    Ok(())
}

/// The run after the event with all its datasets, kept in `buffer` (a new run inserted now).
fn fold_run(
    c: &Connection,
    buffer: &mut JobsBuffer,
    record: &RunRecord,
    upsert: &RunUpsert,
    job_id: Id,
) -> rusqlite::Result<BufferedRun> {
    let known = buffer.known_run(c, &upsert.run_id)?;
    let pending = buffer.runs.get(&upsert.run_id).and_then(|r| r.write);
    let old = known.run;
    let mut run = merge_run(old.as_ref(), upsert, 0, job_id);
    let how = match &old {
        None => Write::Insert,
        Some(o)
            if (&o.run_id, o.job_id, o.began(), &o.parent_run_id)
                != (&run.run_id, run.job_id, run.began(), &run.parent_run_id) =>
        {
            Write::UpdateKeys
        }
        Some(_) => Write::Update,
    };
    if how == Write::Insert {
        run.id = write_run(c, &run, how)?;
        buffer.absent.remove(&upsert.run_id);
    }
    let changed = merge_io(&known.io, &record.io);
    buffer.queue_io(IoTable::Run, run.id, &changed);
    let mut io = known.io;
    for e in changed {
        match io.iter_mut().find(|k| k.direction == e.direction && k.end == e.end) {
            Some(k) => *k = e,
            None => io.push(e),
        }
    }
    let entry = BufferedRun { run: run.clone(), io: io.clone(), write: combined(pending, how) };
    buffer.runs.insert(upsert.run_id.clone(), Box::new(entry));
    Ok(BufferedRun { run, io, write: None })
}

pub(super) fn jobs_by_ids(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<Job>> {
    select_rows(
        c,
        "jobs_by_ids",
        &format!("SELECT {JOB_COLS} FROM jobs WHERE id IN (SELECT value FROM rarray(?1)) ORDER BY id"),
        params![distinct_ids(ids)],
        job_row,
    )
}

pub(super) fn job_by_name(c: &Connection, namespace: &str, name: &str) -> rusqlite::Result<Option<Job>> {
    job_by_name_tx(c, &JobName { namespace: namespace.to_string(), name: name.to_string() })
}

pub(super) fn child_jobs(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<Job>> {
    select_rows(
        c,
        "child_jobs",
        &format!("SELECT {JOB_COLS} FROM jobs WHERE parent_id IN (SELECT value FROM rarray(?1)) ORDER BY id"),
        params![distinct_ids(ids)],
        job_row,
    )
}

const JOBS: Listing =
    Listing { table: "jobs", cols: JOB_COLS, order: "id", count_op: "count_jobs", list_op: "list_jobs" };

pub(super) fn list_jobs(c: &Connection, f: &JobFilter, page: PageRequest) -> rusqlite::Result<Page<Job>> {
    let mut w = Filter::default();
    w.when("namespace = ?", f.namespace.clone().map(SqlValue::Text))
        .when("instr(unicode_lower(name), ?) > 0", f.name.clone().map(SqlValue::Text))
        .when(
            "latest_run_id IN (SELECT id FROM runs WHERE state = ?)",
            f.last_run_state.map(|s| SqlValue::Text(s.as_str().into())),
        );
    if let Some(ids) = &f.container_ids {
        let keys: Vec<String> = ids.iter().map(|id| End::Container { id: *id }.key()).collect();
        let list = serde_json::Value::from(keys).to_string();
        w.when(
            "id IN (SELECT job_id FROM job_io WHERE end_key IN (SELECT value FROM json_each(?)))",
            Some(SqlValue::Text(list)),
        );
    }
    select_page(c, &JOBS, &w.sql(), w.params, page, job_row)
}

pub(super) fn runs_by_ids(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<Run>> {
    select_rows(
        c,
        "runs_by_ids",
        &format!("SELECT {RUN_COLS} FROM runs WHERE id IN (SELECT value FROM rarray(?1)) ORDER BY id"),
        params![distinct_ids(ids)],
        run_row,
    )
}

pub(super) fn runs_by_run_ids(c: &Connection, run_ids: &[String]) -> rusqlite::Result<Vec<Run>> {
    select_rows(
        c,
        "runs_by_run_ids",
        &format!("SELECT {RUN_COLS} FROM runs WHERE run_id IN (SELECT value FROM rarray(?1)) ORDER BY id"),
        params![distinct_strs(run_ids)],
        run_row,
    )
}

/// A run by its OpenLineage `runId` with its datasets, in one statement.
pub(super) fn run_with_io(c: &Connection, run_id: &str) -> rusqlite::Result<KnownRun> {
    store_query(STORE, "run_with_io");
    // Built once: every ingested run event asks it.
    static SQL: LazyLock<String> = LazyLock::new(|| {
        let prefixed =
            |cols: &str, alias: &str| cols.split(", ").map(|c| format!("{alias}.{c}")).collect::<Vec<_>>().join(", ");
        format!(
            "SELECT {}, {} FROM runs r LEFT JOIN run_io io ON io.run_id = r.id WHERE r.run_id = ?1",
            prefixed(RUN_COLS, "r"),
            prefixed(IO_COLS, "io")
        )
    });
    let mut stmt = c.prepare_cached(&SQL)?;
    let mut rows = stmt.query(params![run_id])?;
    let mut known = KnownRun::default();
    let width = RUN_COLS.split(", ").count();
    while let Some(r) = rows.next()? {
        if known.run.is_none() {
            known.run = Some(run_row(r)?);
        }
        if r.get::<_, Option<String>>(width)?.is_some() {
            known.io.push(io_row(r, width)?);
        }
    }
    Ok(known)
}

pub(super) fn child_runs(c: &Connection, run_ids: &[String]) -> rusqlite::Result<Vec<Run>> {
    select_rows(
        c,
        "child_runs",
        &format!("SELECT {RUN_COLS} FROM runs WHERE parent_run_id IN (SELECT value FROM rarray(?1)) ORDER BY id"),
        params![distinct_strs(run_ids)],
        run_row,
    )
}

const RUNS: Listing = Listing {
    table: "runs",
    cols: RUN_COLS,
    order: "began DESC, id DESC",
    count_op: "count_runs",
    list_op: "runs_of_job",
};

pub(super) fn runs_of_job(c: &Connection, job_id: Id, f: &RunFilter, page: PageRequest) -> rusqlite::Result<Page<Run>> {
    let mut w = Filter::default();
    w.when("job_id = ?", Some(SqlValue::Integer(job_id)))
        .when("state = ?", f.state.map(|s| SqlValue::Text(s.as_str().into())))
        .when("began >= ?", f.since.as_ref().map(|t| SqlValue::Text(ts(t))))
        .when("began <= ?", f.until.as_ref().map(|t| SqlValue::Text(ts(t))));
    select_page(c, &RUNS, &w.sql(), w.params, page, run_row)
}

pub(super) fn run_io(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<(Id, IoEntry)>> {
    select_rows(
        c,
        "run_io",
        &format!("SELECT run_id, {IO_COLS} FROM run_io WHERE run_id IN (SELECT value FROM rarray(?1)) ORDER BY run_id, direction, end_key"),
        params![distinct_ids(ids)],
        |r| Ok((r.get(0)?, io_row(r, 1)?)),
    )
}

fn job_io_row(r: &Row) -> rusqlite::Result<(Id, IoEntry)> {
    let mut entry = io_row(r, 1)?;
    let run: Option<Id> = r.get(8)?;
    let at = parse_ts(r.get(9)?)?;
    entry.completed = run.zip(at);
    Ok((r.get(0)?, entry))
}

pub(super) fn job_io(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<(Id, IoEntry)>> {
    select_rows(
        c,
        "job_io",
        &format!(
            "SELECT job_id, {IO_COLS}, completed_run_id, completed_at FROM job_io
             WHERE job_id IN (SELECT value FROM rarray(?1)) ORDER BY job_id, direction, end_key"
        ),
        params![distinct_ids(ids)],
        job_io_row,
    )
}

pub(super) fn jobs_of_ends(c: &Connection, ends: &[End]) -> rusqlite::Result<Vec<(Id, IoEntry)>> {
    let keys: Vec<String> = ends.iter().map(End::key).collect();
    select_rows(
        c,
        "jobs_of_ends",
        &format!(
            "SELECT job_id, {IO_COLS}, completed_run_id, completed_at FROM job_io
             WHERE end_key IN (SELECT value FROM rarray(?1)) ORDER BY job_id, direction, end_key"
        ),
        params![distinct_strs(&keys)],
        job_io_row,
    )
}

pub(super) fn failed_latest_runs(
    c: &Connection,
    since: Option<Timestamp>,
    until: Option<Timestamp>,
    limit: i64,
) -> rusqlite::Result<Vec<Run>> {
    let cols = RUN_COLS.split(", ").map(|col| format!("r.{col}")).collect::<Vec<_>>().join(", ");
    let mut w = Filter::default();
    w.always("r.state IN ('FAIL', 'ABORT')")
        .when("r.ended_at >= ?", since.as_ref().map(|t| SqlValue::Text(ts(t))))
        .when("r.ended_at <= ?", until.as_ref().map(|t| SqlValue::Text(ts(t))));
    let n = w.params.len() + 1;
    let sql = format!(
        "SELECT {cols} FROM jobs j JOIN runs r ON r.id = j.latest_run_id WHERE {} ORDER BY r.ended_at DESC, r.id DESC LIMIT ?{n}",
        w.sql()
    );
    let params = w.params.into_iter().chain([SqlValue::Integer(limit)]);
    select_rows(c, "failed_latest_runs", &sql, rusqlite::params_from_iter(params), run_row)
}

/// Every job, run and io row, as `export` lists them (after the events).
pub(super) fn export(c: &Connection) -> rusqlite::Result<Vec<crate::store::Record>> {
    use crate::store::Record;
    let mut out: Vec<Record> = Vec::new();
    let jobs: Vec<Job> =
        select_rows(c, "export_jobs", &format!("SELECT {JOB_COLS} FROM jobs ORDER BY id"), [], job_row)?;
    out.extend(jobs.into_iter().map(Record::Job));
    let runs: Vec<Run> =
        select_rows(c, "export_runs", &format!("SELECT {RUN_COLS} FROM runs ORDER BY id"), [], run_row)?;
    out.extend(runs.into_iter().map(Record::Run));
    let job_io: Vec<(Id, IoEntry)> = select_rows(
        c,
        "export_job_io",
        &format!(
            "SELECT job_id, {IO_COLS}, completed_run_id, completed_at FROM job_io ORDER BY job_id, direction, end_key"
        ),
        [],
        job_io_row,
    )?;
    out.extend(job_io.into_iter().map(|(job_id, entry)| Record::JobIo { job_id, entry }));
    let run_io: Vec<(Id, IoEntry)> = select_rows(
        c,
        "export_run_io",
        &format!("SELECT run_id, {IO_COLS} FROM run_io ORDER BY run_id, direction, end_key"),
        [],
        |r| Ok((r.get(0)?, io_row(r, 1)?)),
    )?;
    out.extend(run_io.into_iter().map(|(run_id, entry)| Record::RunIo { run_id, entry }));
    Ok(out)
}

/// Imports one exported job, keeping its id.
pub(super) fn import_job(c: &Connection, job: &Job) -> rusqlite::Result<()> {
    write_job(c, job, Write::Insert).map(drop)
}

pub(super) fn import_run(c: &Connection, run: &Run) -> rusqlite::Result<()> {
    write_run(c, run, Write::Insert).map(drop)
}

pub(super) fn import_io(c: &Connection, of_job: bool, owner: Id, entry: &IoEntry) -> rusqlite::Result<()> {
    if of_job {
        upsert_io(c, IoTable::Job, owner, std::slice::from_ref(entry))?;
        if let Some((run, at)) = entry.completed {
            c.prepare_cached(
                "UPDATE job_io SET completed_run_id = ?1, completed_at = ?2 WHERE job_id = ?3 AND direction = ?4 AND end_key = ?5",
            )?
            .execute(params![run, ts(&at), owner, entry.direction.as_str(), entry.end.key()])?;
        }
        Ok(())
    } else {
        upsert_io(c, IoTable::Run, owner, std::slice::from_ref(entry))
    }
}
