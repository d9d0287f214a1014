//! What the ingest calls answer: `recordLineage`'s result, `analyzeSql` / `ingestSql`'s
//! per-statement lineage, and `ingestOpenLineage`'s per-event report.

use async_graphql::{Json, SimpleObject};

use crate::domain::Id;

#[derive(SimpleObject)]
pub struct RecordLineageResult {
    /// `ok`.
    pub status: String,
    /// The operation as stored (upper-cased; `EXTERNAL` by default).
    pub operation: String,
    pub edges_created: i64,
    pub edges_asserted: i64,
    /// Sources a replacing operation (CTAS, VIEW) retired.
    pub edges_retired: i64,
    /// Names that matched no catalog container and became external ends.
    pub unresolved: Vec<String>,
}

#[derive(SimpleObject)]
pub struct SqlColumnLineage {
    /// `<table as in targets>.<column>`.
    pub target: String,
    /// `<table>.<column>` of the base tables whose columns appear in the expression.
    pub sources: Vec<String>,
    /// False only for a bare column reference.
    pub derived: bool,
}

#[derive(SimpleObject)]
pub struct SqlStatementLineage {
    pub index: i64,
    /// `CTAS`, `INSERT_INTO`, `MERGE_INTO`, `VIEW`, `UPDATE`, `SELECT`, ... (`UNKNOWN`: did not parse).
    pub operation: String,
    pub targets: Vec<String>,
    pub sources: Vec<String>,
    pub columns: Vec<SqlColumnLineage>,
    pub errors: Vec<String>,
    /// `SELECT *` over tables of unknown columns, ambiguous or unknown column references.
    pub unresolved: Vec<String>,
    /// The statement with every literal replaced by `?` (what is stored as evidence).
    pub masked_sql: String,
    /// An external table's `LOCATION` (or a COPY's stage or file).
    pub external_location: Option<String>,
    /// The stored procedure the statement came from.
    pub procedure: Option<String>,
}

impl From<crate::ingest::sql::StatementLineage> for SqlStatementLineage {
    fn from(s: crate::ingest::sql::StatementLineage) -> Self {
        SqlStatementLineage {
            index: s.index as i64,
            operation: s.operation,
            targets: s.targets,
            sources: s.sources,
            columns: s
                .columns
                .into_iter()
                .map(|c| SqlColumnLineage { target: c.target, sources: c.sources, derived: c.derived })
                .collect(),
            errors: s.errors,
            unresolved: s.unresolved,
            masked_sql: s.masked_sql,
            external_location: s.external_location,
            procedure: s.procedure,
        }
    }
}

#[derive(SimpleObject)]
pub struct SqlIngestReport {
    /// The import operation this call was: its evidence's `lastObservedOperationId` (and
    /// `firstObservedOperationId` where it observed the evidence first).
    pub operation_id: Id,
    pub statements: Vec<SqlStatementLineage>,
    /// Statements recorded (parsed, with a target).
    pub recorded: i64,
    /// Statements that did not parse (each lists its parser error).
    pub failed: i64,
    /// Table names that matched no catalog container and became external ends.
    pub unresolved: Vec<String>,
    /// The run recorded for the call's `job` (null without one).
    pub run_id: Option<String>,
}

#[derive(SimpleObject)]
pub struct IngestError {
    /// A JSON pointer into the event (empty for the whole event).
    pub location: String,
    pub message: String,
}

#[derive(SimpleObject)]
pub struct IngestEventReport {
    pub index: i64,
    /// The id the event was stored under.
    pub id: Option<Id>,
    /// `applied` (lineage or metadata changed), `recorded` (no lineage changed, the run's state
    /// was recorded), `ignored` (nothing new), `rejected` or `failed`.
    pub status: String,
    /// `run_event`, `job_event` or `dataset_event`.
    pub event_kind: Option<String>,
    pub errors: Vec<IngestError>,
    pub summary: Json<serde_json::Value>,
}

#[derive(SimpleObject)]
pub struct IngestReport {
    pub received: i64,
    pub applied: i64,
    /// Events that changed no lineage but recorded their run's state.
    pub recorded: i64,
    pub ignored: i64,
    pub rejected: i64,
    pub failed: i64,
    pub events: Vec<IngestEventReport>,
}

impl From<crate::service::openlineage::IngestReport> for IngestReport {
    fn from(r: crate::service::openlineage::IngestReport) -> Self {
        let n = |s: &str| r.count(s) as i64;
        IngestReport {
            received: r.events.len() as i64,
            applied: n("applied"),
            recorded: n("recorded"),
            ignored: n("ignored"),
            rejected: n("rejected") + n("denied"),
            failed: n("failed"),
            events: r
                .events
                .iter()
                .map(|e| IngestEventReport {
                    index: e.index as i64,
                    id: e.id,
                    status: crate::api::openlineage::public_status(e.status).to_string(),
                    event_kind: e.kind.map(str::to_string),
                    errors: e
                        .errors
                        .iter()
                        .map(|(l, m)| IngestError { location: l.clone(), message: m.clone() })
                        .collect(),
                    summary: Json(e.summary.clone()),
                })
                .collect(),
        }
    }
}
