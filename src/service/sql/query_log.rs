//! `import-query-log`'s loop: a whole query log (or definitions file, read by
//! `ingest::sql::query_log`) recorded as one import operation, in chunks.
//!
//! Parsing is CPU bound and independent of what earlier chunks record, so the chunks ahead are
//! analysed in parallel (behind the parsing pool, `analyze_sql_in`) while this loop records them
//! in order (`record_sql`): accumulation depends on order (a CTAS, then INSERTs into its table),
//! so a query log's statements apply in `start_time` order. Within a chunk there is one analysis
//! per default database and schema, each session's statements together and in order.
//!
//! The loop prints nothing: the caller passes a progress callback and gets a [`QueryLogImport`]
//! to report.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::ops::Range;
use std::sync::Arc;

use crate::domain::{Datastore, Id};
use crate::error::Error;
use crate::ingest::sql::query_log::{LogKind, QueryLog};
use crate::ingest::sql::{Dialect, Options, StatementLineage};
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
        let mut out = QueryLogImport { operation_id: op.id, rows: rows.len(), ..QueryLogImport::default() };
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
            let r = self.record_sql(caller, &op, ds, &analyzed, &[]).await.map_err(stopped)?;
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
