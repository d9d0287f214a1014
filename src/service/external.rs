//! Table lineage that a provider records by name: external engines through
//! `POST /v1/api/lineage` and `recordLineage` (seed 004), and SQL capture. One rule set, seed
//! 004's accumulation: CTAS, VIEW and semantic views replace the target's sources from the same
//! provider; INSERT, MERGE, EXTERNAL and any other operation add; a table reading itself is no
//! edge; an edge keeps the label of the statement that introduced it.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::{Caller, Lineage};
use crate::auth::Permission;
use crate::domain::{Assertion, AssertionBatch, AssertionSummary, End, Evidence, Id, NewEdge};
use crate::error::{Error, Result};

/// The source type of edges sent by external engines.
pub const EXTERNAL: &str = "external";

/// Operations that define the target afresh, replacing its sources.
pub fn replaces(operation: &str) -> bool {
    matches!(operation, "CTAS" | "VIEW" | "SEMANTIC-VIEW" | "SEMANTIC_VIEW")
}

/// `INSERT` and `INSERT_INTO` both add; the operation is kept upper-cased as sent.
pub fn normalize_operation(operation: Option<&str>) -> String {
    match operation.map(str::trim).filter(|o| !o.is_empty()) {
        Some(o) => o.to_uppercase(),
        None => "EXTERNAL".to_string(),
    }
}

/// One provider's table-level statement about a target.
pub struct TableLineage<'a> {
    pub target: &'a str,
    pub sources: &'a [String],
    pub operation: String,
    /// `external`, or the datastore type for SQL capture.
    pub source_type: String,
    /// Where the names are looked up first (`None`: every datastore).
    pub datastore: Option<Id>,
    /// The evidence row: its key is the provider's identity for this target.
    pub evidence_type: String,
    pub authorship: String,
    pub provider: String,
    pub details: Value,
}

#[derive(Debug, Clone, Default)]
pub struct Recorded {
    pub summary: AssertionSummary,
    /// Names that matched no container and became external ends.
    pub unresolved: Vec<String>,
}

impl Lineage {
    async fn end_of(&self, datastore: Option<Id>, name: &str, unresolved: &mut BTreeSet<String>) -> Result<End> {
        let mut scopes = vec![None];
        if let Some(d) = datastore {
            scopes.insert(0, Some(d));
        }
        for scope in scopes {
            if let Some(c) = self.match_container(&[scope], name).await? {
                return Ok(End::Container { id: c.id });
            }
        }
        unresolved.insert(name.to_string());
        Ok(End::External { fqn: name.trim().to_string() })
    }

    /// Records a provider's table lineage with seed 004's accumulation rules, in one transaction.
    pub async fn record_table_lineage(&self, caller: &Caller, t: TableLineage<'_>) -> Result<Recorded> {
        if t.target.trim().is_empty() {
            return Err(Error::BadInput("target is required".into()));
        }
        let mut unresolved = BTreeSet::new();
        let target = self.end_of(t.datastore, t.target, &mut unresolved).await?;
        let mut sources = Vec::new();
        for s in t.sources.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
            let end = self.end_of(t.datastore, s, &mut unresolved).await?;
            // A table reading itself is not an edge.
            if end != target && !sources.contains(&end) {
                sources.push(end);
            }
        }
        let key = json!([t.source_type, "target", target.key()]).to_string();
        let now = crate::domain::now();
        let mut batch = AssertionBatch::default();
        for source in &sources {
            if source.container_id().is_none() && target.container_id().is_none() {
                // Both ends unknown: never stored as a relationship.
                continue;
            }
            batch.assert.push(Assertion {
                edge: NewEdge {
                    source: source.clone(),
                    target: target.clone(),
                    description: None,
                    source_type: t.source_type.clone(),
                    operation: Some(t.operation.clone()),
                    derived: None,
                    transformations: None,
                    last_asserted_at: Some(now),
                },
                evidence: Evidence {
                    edge_id: 0,
                    key: key.clone(),
                    provider: t.provider.clone(),
                    evidence_type: t.evidence_type.clone(),
                    authorship: t.authorship.clone(),
                    source_relation: None,
                    observed_at: Some(now),
                    first_observed_operation_id: None,
                    last_observed_operation_id: None,
                    details: Some(t.details.clone()),
                    retired_at: None,
                },
            });
        }
        if replaces(&t.operation) {
            // The target is defined afresh: this provider's other sources of it retire.
            let keep: BTreeSet<String> = sources.iter().map(End::key).collect();
            let stale: Vec<Id> = self
                .store
                .live_edges_touching_ends(std::slice::from_ref(&target), &t.source_type)
                .await?
                .into_iter()
                .filter(|e| e.target == target && !e.is_field_edge() && !keep.contains(&e.source.key()))
                .map(|e| e.id)
                .collect();
            self.retire_edges_in(&mut batch, &stale).await?;
        }
        let mut ends: Vec<&End> = sources.iter().collect();
        ends.push(&target);
        caller.require(self.datastores_of_ends(ends).await?, Permission::Editor, "recording lineage")?;
        let summary = self.store.apply_assertions(batch, now).await?;
        Ok(Recorded { summary, unresolved: unresolved.into_iter().collect() })
    }

    /// Seed 004's external-engine edge: `POST /v1/api/lineage` and `recordLineage`.
    pub async fn record_external(
        &self,
        caller: &Caller,
        target: &str,
        sources: &[String],
        operation: Option<&str>,
    ) -> Result<Recorded> {
        let operation = normalize_operation(operation);
        self.record_table_lineage(
            caller,
            TableLineage {
                target,
                sources,
                operation: operation.clone(),
                source_type: EXTERNAL.into(),
                datastore: None,
                evidence_type: "external_engine".into(),
                authorship: "provider".into(),
                provider: EXTERNAL.into(),
                details: json!({"operation": operation, "submittedBy": caller.user}),
            },
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulation_rules() {
        assert!(replaces("CTAS") && replaces("VIEW") && replaces("SEMANTIC-VIEW"));
        assert!(!replaces("INSERT") && !replaces("INSERT_INTO") && !replaces("MERGE_INTO") && !replaces("EXTERNAL"));
        assert_eq!(normalize_operation(None), "EXTERNAL");
        assert_eq!(normalize_operation(Some(" insert ")), "INSERT");
    }
}
