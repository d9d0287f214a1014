//! Lineage from SQL: `analyzeSql` (what statements mean, recording nothing) and `ingestSql`
//! (recording it with seed 004's accumulation rules, as the datastore's type).
//!
//! Parsing is CPU work that cannot be interrupted once started, so it runs on the blocking pool
//! behind a semaphore as wide as the machine (a burst of large scripts cannot take every
//! thread), and the parser module refuses statements over its size and nesting caps before
//! parsing. `SELECT *` expands from the catalog: a first analysis names the tables read, their
//! catalogued columns are loaded in one pass, and a second analysis uses them.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

use serde_json::json;
use tokio::sync::Semaphore;

use super::external::TableLineage;
use super::{Caller, Lineage};
use crate::auth::Permission;
use crate::domain::{Assertion, AssertionBatch, End, Evidence, Id, NewEdge, PageRequest};
use crate::error::{Error, Result};
use crate::ingest::sql::{self, Dialect, Options, StatementLineage};

/// Statements in one call: a query log is imported in chunks of this size.
pub const MAX_STATEMENTS: usize = 1000;

fn parsing_pool() -> &'static Arc<Semaphore> {
    static POOL: OnceLock<Arc<Semaphore>> = OnceLock::new();
    POOL.get_or_init(|| Arc::new(Semaphore::new(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2))))
}

pub fn parse_dialect(name: &str) -> Result<Dialect> {
    Dialect::parse(name).ok_or_else(|| {
        Error::BadInput(format!(
            "unknown dialect {name:?}: use postgres, redshift, mysql, mariadb, snowflake, bigquery, tsql, sparksql, hive, oracle, trino or ansi"
        ))
    })
}

async fn analyze_blocking(
    statements: Vec<String>,
    dialect: Dialect,
    options: Options,
    catalog: HashMap<String, Vec<String>>,
) -> Result<Vec<StatementLineage>> {
    let _permit = parsing_pool().clone().acquire_owned().await.map_err(|e| Error::Internal(e.to_string()))?;
    tokio::task::spawn_blocking(move || sql::analyze(&statements, dialect, &options, &catalog))
        .await
        .map_err(|e| Error::Internal(format!("SQL analysis stopped: {e}")))
}

impl Lineage {
    /// The catalogued columns of the tables these names denote, keyed by the name as written.
    async fn columns_of(
        &self,
        datastore: Option<Id>,
        names: &BTreeSet<String>,
    ) -> Result<HashMap<String, Vec<String>>> {
        let mut out = HashMap::new();
        for name in names {
            let scopes: Vec<Option<Id>> = match datastore {
                Some(d) => vec![Some(d)],
                None => vec![None],
            };
            let Some(c) = self.match_container(&scopes, name).await? else { continue };
            let fields = self.store.container_fields(c.id, None, PageRequest { page: 1, size: 1000 }).await?;
            out.insert(name.clone(), fields.items.into_iter().map(|f| f.name).collect());
        }
        Ok(out)
    }

    /// What the statements mean, recording nothing.
    pub async fn analyze_sql(
        &self,
        statements: Vec<String>,
        dialect: &str,
        default_database: Option<String>,
        default_schema: Option<String>,
        datastore: Option<Id>,
    ) -> Result<Vec<StatementLineage>> {
        let dialect = parse_dialect(dialect)?;
        if statements.len() > MAX_STATEMENTS {
            return Err(Error::BadInput(format!(
                "at most {MAX_STATEMENTS} statements per call, got {}",
                statements.len()
            )));
        }
        let options = Options { default_database, default_schema, ..Options::default() };
        let first = analyze_blocking(statements.clone(), dialect, options.clone(), HashMap::new()).await?;
        let Some(ds) = datastore else { return Ok(first) };
        if self.store.datastores_by_ids(&[ds]).await?.is_empty() {
            return Err(Error::NotFound(format!("Datastore {ds} not found")));
        }
        let read: BTreeSet<String> = first.iter().flat_map(|s| s.sources.iter().cloned()).collect();
        let catalog = self.columns_of(Some(ds), &read).await?;
        if catalog.is_empty() {
            return Ok(first);
        }
        analyze_blocking(statements, dialect, options, catalog).await
    }

    /// Records what the statements mean, as lineage of the datastore's type: table edges with
    /// seed 004's accumulation, column edges decided by the latest statement writing each column.
    pub async fn ingest_sql(
        &self,
        caller: &Caller,
        statements: Vec<String>,
        dialect: &str,
        datastore: Id,
    ) -> Result<(Vec<StatementLineage>, Vec<String>)> {
        self.ingest_sql_with(caller, statements, dialect, datastore, None, None).await
    }

    /// `ingest_sql` with the statements' default database and schema (a query log's columns).
    pub async fn ingest_sql_with(
        &self,
        caller: &Caller,
        statements: Vec<String>,
        dialect: &str,
        datastore: Id,
        default_database: Option<String>,
        default_schema: Option<String>,
    ) -> Result<(Vec<StatementLineage>, Vec<String>)> {
        let Some(ds) = self.store.datastores_by_ids(&[datastore]).await?.pop() else {
            return Err(Error::NotFound(format!("Datastore {datastore} not found")));
        };
        caller.require([ds.id], Permission::Editor, "ingestSql")?;
        let analyzed =
            self.analyze_sql(statements.clone(), dialect, default_database, default_schema, Some(ds.id)).await?;
        let mut unresolved = BTreeSet::new();
        for st in &analyzed {
            if !st.errors.is_empty() || st.intermediate || st.targets.is_empty() {
                continue;
            }
            let evidence_type = if st.procedure.is_some() {
                "parsed_stored_code"
            } else if st.operation == "VIEW" {
                "parsed_view_definition"
            } else {
                "parsed_query_history"
            };
            for target in &st.targets {
                let mut sources = st.sources.clone();
                if let Some(loc) = &st.external_location {
                    sources.push(loc.clone());
                }
                let recorded = self
                    .record_table_lineage(
                        caller,
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
                    )
                    .await?;
                unresolved.extend(recorded.unresolved);
                self.record_sql_columns(caller, &ds.kind, ds.id, target, st, evidence_type).await?;
            }
        }
        Ok((analyzed, unresolved.into_iter().collect()))
    }

    /// Column edges of one statement's target: for each column it writes, the statement decides
    /// its sources (the column's other SQL-derived sources retire); other columns keep theirs.
    async fn record_sql_columns(
        &self,
        caller: &Caller,
        source_type: &str,
        datastore: Id,
        target: &str,
        st: &StatementLineage,
        evidence_type: &str,
    ) -> Result<()> {
        let prefix = format!("{target}.");
        let cols: Vec<_> = st.columns.iter().filter(|c| c.target.starts_with(&prefix)).collect();
        if cols.is_empty() {
            return Ok(());
        }
        let Some(tc) = self.match_container(&[Some(datastore), None], target).await? else { return Ok(()) };
        let mut fields: HashMap<Id, HashMap<String, Id>> = HashMap::new();
        let now = crate::domain::now();
        let mut batch = AssertionBatch::default();
        for col in cols {
            let name = &col.target[prefix.len()..];
            let Some(tf) = self.field_id_cached(&mut fields, tc.id, name).await? else { continue };
            let target_end = End::Field { id: tf, container_id: tc.id };
            let mut keep = BTreeSet::new();
            for src in &col.sources {
                let Some((table, column)) = src.rsplit_once('.') else { continue };
                let Some(sc) = self.match_container(&[Some(datastore), None], table).await? else { continue };
                let Some(sf) = self.field_id_cached(&mut fields, sc.id, column).await? else { continue };
                let source_end = End::Field { id: sf, container_id: sc.id };
                if source_end == target_end {
                    continue;
                }
                keep.insert(source_end.key());
                batch.assert.push(Assertion {
                    edge: NewEdge {
                        source: source_end,
                        target: target_end.clone(),
                        description: None,
                        source_type: source_type.to_string(),
                        operation: Some(st.operation.clone()),
                        derived: Some(col.derived),
                        transformations: None,
                        last_asserted_at: Some(now),
                    },
                    evidence: Evidence {
                        edge_id: 0,
                        key: json!([source_type, "column", target_end.key()]).to_string(),
                        provider: source_type.to_string(),
                        evidence_type: evidence_type.to_string(),
                        authorship: "tributary".into(),
                        source_relation: None,
                        observed_at: Some(now),
                        first_observed_operation_id: None,
                        last_observed_operation_id: None,
                        details: Some(json!({"operation": st.operation, "derived": col.derived})),
                        retired_at: None,
                    },
                });
            }
            let stale: Vec<Id> = self
                .store
                .live_edges_touching_ends(std::slice::from_ref(&target_end), source_type)
                .await?
                .into_iter()
                .filter(|e| e.target == target_end && !keep.contains(&e.source.key()))
                .map(|e| e.id)
                .collect();
            self.retire_edges_in(&mut batch, &stale).await?;
        }
        let ends: Vec<End> = batch.assert.iter().flat_map(|a| [a.edge.source.clone(), a.edge.target.clone()]).collect();
        caller.require(self.datastores_of_ends(ends.iter()).await?, Permission::Editor, "ingestSql")?;
        self.store.apply_assertions(batch, now).await?;
        Ok(())
    }
}
