//! Recording analysed statements (`record_sql`, shared by `ingestSql` and each chunk of
//! `import-query-log`): the chunk's catalog names and fields are read first in a few batched
//! reads, then its statements are recorded in order in one store session (one write
//! transaction, one commit) where the store offers one, so a later statement reads what an
//! earlier one of the same chunk wrote (a CTAS, then INSERTs from it; a column re-derived
//! retires the earlier statement's edges) exactly as when each committed alone.
//!
//! When anything in the session fails (a statement's recording, or the commit), the whole
//! chunk is rolled back and recorded again statement by statement, each in its own
//! transactions as before sessions: the statements before the failing one are kept, and the
//! failing one's error is the answer, so no statement is lost or counted silently (on Neo4j a
//! concurrent writer can fail a session: see `Store::session_conflicts`). Where the store has
//! no session, statements are recorded that way from the start.
//!
//! The runs of SQL jobs among the statements (`SqlRun`: an `ingestSql(job:)` call, a query
//! log's rows with a user) are recorded after the statements, in the same session: a chunk's
//! lineage and its runs commit together.

use std::collections::{BTreeSet, HashSet};

use serde_json::{json, Value};

use super::{evidence_type, Recording};
use crate::auth::Permission;
use crate::domain::Datastore;
use crate::error::Result;
use crate::ingest::sql::StatementLineage;
use crate::service::external::{Operation, Plan, TableLineage};
use crate::service::jobs::SqlRun;
use crate::service::{Caller, Lineage};

/// A statement that records lineage: parsed, with a target that is not an intermediate table.
fn recordable(st: &StatementLineage) -> bool {
    st.errors.is_empty() && !st.intermediate && !st.targets.is_empty()
}

impl Lineage {
    /// Records analysed statements in order (each one's table edges, then its column edges) as
    /// part of the operation `op`, then the `runs` of SQL jobs among them (validated by the
    /// caller); and, with a forwarder, sends each statement on as an OpenLineage event once it
    /// is committed. See the module comment for the transactions.
    pub async fn record_sql(
        &self,
        caller: &Caller,
        op: &Operation,
        ds: &Datastore,
        analyzed: &[StatementLineage],
        runs: &[SqlRun],
    ) -> Result<Recording> {
        caller.require([ds.id], Permission::Editor, "ingestSql")?;
        self.prefetch_catalog(op, ds, analyzed, runs).await?;
        let (session, in_session) = self.session().await;
        let Some(session) = session else {
            let mut recording = self.record_each(caller, op, ds, analyzed, None).await?;
            recording.runs = self.record_runs(op, ds, analyzed, runs).await?;
            return Ok(recording);
        };
        let mut events = Vec::new();
        let attempt = match in_session.record_each(caller, op, ds, analyzed, Some(&mut events)).await {
            Ok(mut recording) => match in_session.record_runs(op, ds, analyzed, runs).await {
                Ok(n) => {
                    recording.runs = n;
                    session.commit_session().await.map(|()| recording).map_err(Into::into)
                }
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        // The last handles on the session: uncommitted, dropping them rolls it back.
        drop((in_session, session));
        match attempt {
            Ok(recording) => {
                if let Some(forwarder) = &self.forwarder {
                    for event in events {
                        forwarder.submit(event).await;
                    }
                }
                Ok(recording)
            }
            Err(e) => {
                tracing::warn!(
                    error = %e.message(),
                    statements = analyzed.len(),
                    "recording a chunk of SQL in one transaction failed; recording it statement by statement"
                );
                let mut recording = self.record_each(caller, op, ds, analyzed, None).await?;
                recording.runs = self.record_runs(op, ds, analyzed, runs).await?;
                Ok(recording)
            }
        }
    }

    /// Records each run's job and run (`sql_run_record`), one `record_run` each; how many.
    async fn record_runs(
        &self,
        op: &Operation,
        ds: &Datastore,
        analyzed: &[StatementLineage],
        runs: &[SqlRun],
    ) -> Result<usize> {
        for run in runs {
            let record = self.sql_run_record(op, ds, run, analyzed).await?;
            self.store.record_run(record).await?;
        }
        Ok(runs.len())
    }

    /// Reads what the statements' recording will look up, in a few batched reads: every table
    /// name they write or read (targets, sources, the external location, the tables of column
    /// sources) and the fields of the containers found. The operation's cache then answers
    /// `container_named` and `fields_cached` for all of them. The names the runs read and wrote
    /// are read in the datastore, where `sql_run_record` looks them up.
    async fn prefetch_catalog(
        &self,
        op: &Operation,
        ds: &Datastore,
        analyzed: &[StatementLineage],
        runs: &[SqlRun],
    ) -> Result<()> {
        if !runs.is_empty() {
            let ran: HashSet<usize> = runs.iter().flat_map(|r| r.statements.clone()).collect();
            let names: BTreeSet<&str> = analyzed
                .iter()
                .filter(|st| st.errors.is_empty() && ran.contains(&st.index))
                .flat_map(|st| st.sources.iter().chain(&st.targets).map(String::as_str))
                .collect();
            self.resolve_many(op, Some(ds.id), names).await?;
        }
        let mut names: BTreeSet<&str> = BTreeSet::new();
        for st in analyzed.iter().filter(|st| recordable(st)) {
            names.extend(st.targets.iter().chain(&st.sources).chain(&st.external_location).map(String::as_str));
            let column_tables = st.columns.iter().flat_map(|c| &c.sources).filter_map(|s| s.rsplit_once('.'));
            names.extend(column_tables.map(|(table, _)| table));
        }
        // Storage URLs are no catalog names (`dataset_of` splits them itself), but a lookup of
        // one is harmless: it finds nothing, as its single read would.
        names.retain(|n| !n.trim().is_empty());
        if names.is_empty() {
            return Ok(());
        }
        self.containers_named(op, ds.id, &names).await?;
        let found = self.cached_containers(op, ds.id, names.iter().copied());
        self.fields_many(op, &found).await
    }

    /// Records the statements one after the other, each as one batch (`apply_plan`): in the
    /// session this service is on, or each in its own transaction. Events for the forwarder go
    /// to `events` when given (sent after the commit), else straight to the forwarder.
    async fn record_each(
        &self,
        caller: &Caller,
        op: &Operation,
        ds: &Datastore,
        analyzed: &[StatementLineage],
        mut events: Option<&mut Vec<Value>>,
    ) -> Result<Recording> {
        let mut out = Recording::default();
        for st in analyzed.iter().filter(|st| recordable(st)) {
            let evidence_type = evidence_type(st);
            let mut sources = st.sources.clone();
            // A load's path is already among its sources.
            if let Some(loc) = st.external_location.as_ref().filter(|l| !sources.contains(l)) {
                sources.push(loc.clone());
            }
            // The statement's table and column edges: one batch.
            let mut plan = Plan::default();
            for target in &st.targets {
                self.plan_table_lineage(
                    op,
                    TableLineage {
                        target,
                        sources: &sources,
                        operation: st.operation.clone(),
                        source_type: ds.kind.clone(),
                        datastore: Some(ds.id),
                        evidence_type: evidence_type.into(),
                        authorship: "tributary".into(),
                        provider: ds.kind.clone(),
                        details: json!({"operation": st.operation, "sql": st.masked_sql, "procedure": st.procedure}),
                    },
                    &mut plan,
                )
                .await?;
                self.plan_sql_columns(op, ds, target, st, evidence_type, &mut plan).await?;
            }
            let summary = self.apply_plan(caller, plan.batch, &plan.datastores, "ingestSql").await?;
            out.edges_asserted += summary.edges_asserted;
            out.edges_created += summary.edges_created;
            out.unresolved.extend(plan.unresolved);
            out.recorded += 1;
            if let Some(forwarder) = &self.forwarder {
                let event = self.openlineage_event(op, ds, st).await?;
                match events.as_deref_mut() {
                    Some(later) => later.push(event),
                    None => forwarder.submit(event).await,
                }
            }
            // A session's calls run on this task's thread without yielding: let the worker's
            // other tasks (the next chunks' analysis, a server's requests) in between statements.
            tokio::task::yield_now().await;
        }
        Ok(out)
    }
}
