//! `import-query-log`'s loop: a whole query log (or definitions file, read by
//! `ingest::sql::query_log`) recorded as one import operation, in chunks.
//!
//! Parsing is CPU bound and independent of what earlier chunks record, so the chunks ahead are
//! analysed in parallel (behind the parsing pool, `analyze_sql_in`) while this loop records them
//! in order (`record_sql`): accumulation depends on order (a CTAS, then INSERTs into its table),
//! so a query log's statements apply in `start_time` order. Within a chunk there is one analysis
//! per default database and schema, each session's statements together and in order.
//!
//! **Jobs and runs.** A row that names who ran it (a user column) is a run of that user's job,
//! recorded the way `ingestSql(job:)` records one (`SqlRun`, with the chunk's lineage): the job
//! is named after the user in the datastore's OpenLineage namespace (`namespace_of`, as the SQL
//! jobs it emits are), the run id is [`query_log_run_id`], and the run is COMPLETE at the row's
//! `end_time` (else its `start_time`, else when it was imported), STARTed at `start_time` when
//! both are known. Its id and times come from the row, so importing the log again finds the same
//! runs. A row without a user records no job.
//!
//! The loop prints nothing: the caller passes a progress callback and gets a [`QueryLogImport`]
//! to report.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::ops::Range;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::domain::{Datastore, Id, JobName};
use crate::error::Error;
use crate::ingest::sql::query_log::{LogKind, LoggedQuery, QueryLog};
use crate::ingest::sql::{Dialect, Options, StatementLineage};
use crate::service::jobs::SqlRun;
use crate::service::{Caller, Lineage};

/// What an import did, for its summary.
#[derive(Debug, Clone, Default)]
pub struct QueryLogImport {
    pub operation_id: Id,
    /// Rows read (one statement, script or definition each).
    pub rows: usize,
    /// Statements that recorded lineage.
    pub recorded: usize,
    /// Rows that parsed, and those that did not.
    pub parsed: usize,
    pub failed: usize,
    /// Statements after splitting scripts and procedures.
    pub entries: usize,
    pub edges_asserted: i64,
    pub edges_created: i64,
    /// Table names that matched no catalog container.
    pub unresolved: BTreeSet<String>,
    /// Why statements did not parse (the parser's message without its position), with how many
    /// did not for each reason, most first.
    pub failure_reasons: Vec<(String, usize)>,
    /// Runs recorded (one per row with a user), the jobs they belong to (the users), and the
    /// jobs' namespace.
    pub runs: usize,
    pub jobs: BTreeSet<String>,
    pub job_namespace: String,
}

/// Why an import stopped. The statements recorded before stay recorded.
#[derive(Debug)]
pub enum ImportError {
    /// Analysing or recording the chunk starting at this row (numbered as the rows are applied,
    /// from 2, the header being 1) failed.
    Stopped { row: usize, error: Error },
    /// A parsing task panicked or was cancelled.
    Task(tokio::task::JoinError),
    /// The import could not begin.
    Begin(Error),
}

/// A parser message without its position, so that failures group by reason.
pub fn failure_reason(error: &str) -> String {
    let reason = error.split(" at Line:").next().unwrap_or(error).trim();
    let mut cut = reason.len().min(100);
    while !reason.is_char_boundary(cut) {
        cut -= 1;
    }
    reason.get(..cut).unwrap_or(reason).to_string()
}

/// The run id of a logged statement: `<datastore>:<query id>` (a query id is unique in its
/// warehouse, not across warehouses, and run ids are unique in the store), else `<datastore>:`
/// and 16 hex digits of the SHA-256 of what the row says (user, times, defaults, statement), so
/// that the same row imported again is the same run.
pub fn query_log_run_id(datastore: &str, row: &LoggedQuery) -> String {
    if let Some(id) = &row.query_id {
        return format!("{datastore}:{id}");
    }
    let mut h = Sha256::new();
    let ended = row.ended_at.map(|t| t.to_rfc3339()).unwrap_or_default();
    for part in [
        row.user.as_deref().unwrap_or(""),
        &row.start,
        &ended,
        row.database.as_deref().unwrap_or(""),
        row.schema.as_deref().unwrap_or(""),
        &row.sql,
    ] {
        // Each part with its length, so that no two rows' parts run together alike.
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    let digest: String = h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("{datastore}:{digest}")
}

/// The runs of a chunk's rows that name a user (see the module's notes); their statements are
/// the rows' positions in the chunk.
fn runs_of(
    rows: &[LoggedQuery],
    range: &Range<usize>,
    ds: &Datastore,
    namespace: &str,
) -> Result<Vec<SqlRun>, ImportError> {
    let now = crate::domain::now();
    let mut runs = Vec::new();
    for i in range.clone() {
        let row = &rows[i];
        let Some(user) = &row.user else { continue };
        let at = i - range.start;
        let run = SqlRun {
            job: JobName { namespace: namespace.to_string(), name: user.clone() },
            run_id: query_log_run_id(&ds.name, row),
            statements: at..at + 1,
            started_at: row.ended_at.and(row.started_at),
            ended_at: row.ended_at.or(row.started_at).unwrap_or(now),
        };
        run.validate().map_err(|e| ImportError::Stopped {
            row: i + 2,
            error: Error::BadInput(format!("its user or query id cannot name a job or run: {}", e.message())),
        })?;
        runs.push(run);
    }
    Ok(runs)
}

impl Lineage {
    /// Records a query log's (or definitions file's) lineage in `ds` as one import operation,
    /// `chunk` rows at a time (see the module's notes); `progress` is told how many rows each
    /// recorded chunk held.
    pub async fn import_query_log(
        &self,
        caller: &Caller,
        ds: &Datastore,
        dialect: Dialect,
        log: QueryLog,
        chunk: usize,
        mut progress: impl FnMut(usize),
    ) -> Result<QueryLogImport, ImportError> {
        let mut rows = log.rows;
        if log.kind == LogKind::Queries {
            // Accumulation depends on order (a CTAS then INSERTs): statements apply as they ran.
            rows.sort_by(|a, b| a.start.cmp(&b.start));
        }
        let chunk = chunk.max(1);
        let chunks: Vec<Range<usize>> =
            (0..rows.len()).step_by(chunk).map(|i| i..(i + chunk).min(rows.len())).collect();
        let op = self.begin_operation().await.map_err(ImportError::Begin)?;
        let ahead = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2) + 1;
        let rows = Arc::new(rows);
        let spawn = |range: Range<usize>| {
            let (lineage, op, rows) = (self.clone(), op.clone(), rows.clone());
            let ds_id = ds.id;
            tokio::spawn(async move {
                // One analysis per default database and schema in the chunk (each session's
                // statements together, in order); the answers go back into row order.
                let mut groups: BTreeMap<(Option<String>, Option<String>), Vec<usize>> = BTreeMap::new();
                for i in range.clone() {
                    groups.entry((rows[i].database.clone(), rows[i].schema.clone())).or_default().push(i);
                }
                let mut out: Vec<(usize, StatementLineage)> = Vec::with_capacity(range.len());
                for ((database, schema), members) in groups {
                    let statements: Vec<String> = members.iter().map(|&i| rows[i].sql.clone()).collect();
                    let options = Options { default_database: database, default_schema: schema, ..Options::default() };
                    let analyzed = lineage.analyze_sql_in(Some(&op), statements, dialect, options, Some(ds_id)).await?;
                    for mut st in analyzed {
                        let row = members.get(st.index).copied().unwrap_or(range.start);
                        st.index = row - range.start;
                        out.push((row, st));
                    }
                }
                // Stable: a script's several entries keep their order.
                out.sort_by_key(|(row, _)| *row);
                Ok::<_, Error>(out.into_iter().map(|(_, st)| st).collect::<Vec<_>>())
            })
        };
        let mut pending = VecDeque::new();
        let mut next = 0;
        let namespace = super::namespace_of(ds);
        let mut out = QueryLogImport {
            operation_id: op.id,
            rows: rows.len(),
            job_namespace: namespace.clone(),
            ..QueryLogImport::default()
        };
        let mut reasons: HashMap<String, usize> = HashMap::new();
        for range in &chunks {
            while next < chunks.len() && pending.len() < ahead {
                pending.push_back(spawn(chunks[next].clone()));
                next += 1;
            }
            let Some(task) = pending.pop_front() else { break };
            let stopped = |error: Error| ImportError::Stopped { row: range.start + 2, error };
            let mut analyzed: Vec<StatementLineage> = task.await.map_err(ImportError::Task)?.map_err(stopped)?;
            for st in &mut analyzed {
                let row = &rows[range.start + st.index];
                if st.procedure.is_none() {
                    st.procedure.clone_from(&row.procedure);
                }
            }
            let mut bad = BTreeSet::new();
            for st in &analyzed {
                out.entries += 1;
                if let Some(e) = st.errors.first() {
                    bad.insert(st.index);
                    *reasons.entry(failure_reason(e)).or_default() += 1;
                }
            }
            out.failed += bad.len();
            out.parsed += range.len() - bad.len();
            let runs = runs_of(&rows, range, ds, &namespace)?;
            let r = self.record_sql(caller, &op, ds, &analyzed, &runs).await.map_err(stopped)?;
            out.runs += r.runs;
            out.jobs.extend(runs.into_iter().map(|r| r.job.name));
            out.recorded += r.recorded;
            out.edges_asserted += r.edges_asserted;
            out.edges_created += r.edges_created;
            out.unresolved.extend(r.unresolved);
            progress(range.len());
        }
        let mut reasons: Vec<(String, usize)> = reasons.into_iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out.failure_reasons = reasons;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(user: Option<&str>, query_id: Option<&str>, sql: &str) -> LoggedQuery {
        LoggedQuery {
            sql: sql.into(),
            database: Some("DB".into()),
            schema: None,
            start: "2026-01-01 00:00:00".into(),
            procedure: None,
            user: user.map(String::from),
            query_id: query_id.map(String::from),
            started_at: None,
            ended_at: None,
        }
    }

    #[test]
    fn run_ids_are_the_query_id_in_its_datastore_else_the_rows_digest() {
        assert_eq!(query_log_run_id("wh", &row(Some("ann"), Some("01b2-c3"), "SELECT 1")), "wh:01b2-c3");
        let a = query_log_run_id("wh", &row(Some("ann"), None, "SELECT 1"));
        assert_eq!(a.len(), "wh:".len() + 16);
        assert_eq!(a, query_log_run_id("wh", &row(Some("ann"), None, "SELECT 1")), "stable");
        assert_ne!(a, query_log_run_id("wh", &row(Some("bob"), None, "SELECT 1")));
        assert_ne!(a, query_log_run_id("wh", &row(Some("ann"), None, "SELECT 2")));
        assert_ne!(a, query_log_run_id("other", &row(Some("ann"), None, "SELECT 1")));
    }

    #[test]
    fn rows_with_a_user_are_runs_with_the_logs_times() {
        let ds = Datastore {
            id: 1,
            name: "wh".into(),
            kind: "snowflake".into(),
            store_type: None,
            namespaces: vec![],
            enrichment_only: false,
        };
        let t = |s: &str| crate::ingest::sql::query_log::parse_log_time(s);
        let mut both = row(Some("ann"), Some("q1"), "SELECT 1");
        (both.started_at, both.ended_at) = (t("2026-01-01 00:00:01"), t("2026-01-01 00:00:03"));
        let mut start_only = row(Some("bob"), Some("q2"), "SELECT 2");
        start_only.started_at = t("2026-01-01 00:00:05");
        let rows = vec![row(None, Some("q0"), "SELECT 0"), both, start_only];
        let runs = runs_of(&rows, &(0..3), &ds, "snowflake://wh").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(runs.len(), 2, "no user, no run");
        assert_eq!(
            (runs[0].job.name.as_str(), runs[0].run_id.as_str(), &runs[0].statements),
            ("ann", "wh:q1", &(1..2))
        );
        assert_eq!((runs[0].started_at, Some(runs[0].ended_at)), (t("2026-01-01 00:00:01"), t("2026-01-01 00:00:03")));
        assert_eq!(runs[1].job.namespace, "snowflake://wh");
        assert_eq!((runs[1].started_at, Some(runs[1].ended_at)), (None, t("2026-01-01 00:00:05")));
        let long = vec![row(Some("ann"), Some(&"x".repeat(300)), "SELECT 1")];
        match runs_of(&long, &(0..1), &ds, "n") {
            Err(ImportError::Stopped { row: 2, error }) => assert!(error.message().contains("query id"), "{error:?}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn failure_reasons_drop_positions_and_stay_short() {
        assert_eq!(
            failure_reason("Expected: an SQL statement, found: this at Line: 1, Column: 1"),
            "Expected: an SQL statement, found: this"
        );
        let long = "é".repeat(80);
        assert!(failure_reason(&long).len() <= 100);
    }
}
