//! The lineage model and the rules of the seeds that need no database.
//!
//! Invariant: nothing here does I/O or knows about axum, async-graphql, rusqlite or neo4rs.
//! The types derive `serde` only where a store persists them as JSON (export lines, details).
//!
//! # How it fits
//!
//! This is the model: `Datastore`, `Container`, `Field`, `Edge` with `End::{Container, Field, External}`, `Interval`,
//! `Evidence`, `NewEdge`, `EdgePatch`, `Page`, and for providers `Assertion`, `AssertionBatch`, `AssertionSummary`,
//! `MetadataAssertion` and `StoredEvent`. It has no I/O.
//! - `domain::rules` holds the seed rules that need no database, as pure functions: `check_granularity` (both ends
//!   containers or both fields), `is_user_source_type` (`manual`, `catalog_import` and `inferred` belong to the user;
//!   any other source type names a provider that maintains the edge), `delete_retires` (a provider's edge retires, a
//!   user's is deleted), `wants_auto_container_edge`, and `is_masking` / `is_indirect_only` for `piiFlow`.
//! - `effective_flags`: a `user` value wins, otherwise the most recently asserted.

pub mod changes;
pub mod jobs;
pub mod rules;
pub mod time;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use self::changes::{Change, ChangeKind, NewChange};
pub use self::jobs::{
    IoDirection, IoEntry, Job, JobFilter, JobName, JobUpsert, KnownRun, Run, RunFilter, RunRecord, RunState,
    RunStateChange, RunUpsert,
};

/// Ids of datastores, containers, fields and edges (GraphQL `Int`).
pub type Id = i64;
pub type Timestamp = DateTime<Utc>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Datastore {
    pub id: Id,
    pub name: String,
    /// The datastore type (`snowflake`, `postgresql`, ...): also the `sourceType` of SQL-captured edges.
    pub kind: String,
    pub store_type: Option<String>,
    /// OpenLineage namespaces (`postgres://host:5432`, ...) whose datasets resolve here.
    pub namespaces: Vec<String>,
    pub enrichment_only: bool,
}

#[derive(Debug, Clone, Default)]
pub struct DatastoreInput {
    pub name: String,
    pub kind: String,
    pub store_type: Option<String>,
    pub namespaces: Vec<String>,
    pub enrichment_only: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Container {
    pub id: Id,
    pub datastore_id: Id,
    pub name: String,
    pub database: Option<String>,
    pub schema: Option<String>,
    pub container_type: String,
    pub table_type: Option<String>,
    pub display_name: Option<String>,
    pub purpose: Option<String>,
    pub active_anomaly_count: i64,
}

impl Container {
    /// The natural key inside a datastore: `database.schema.name` with absent parts left out.
    pub fn key(database: Option<&str>, schema: Option<&str>, name: &str) -> String {
        container_key(database, schema, name)
    }
}

pub fn container_key(database: Option<&str>, schema: Option<&str>, name: &str) -> String {
    [database, schema, Some(name)].into_iter().flatten().filter(|p| !p.is_empty()).collect::<Vec<_>>().join(".")
}

#[derive(Debug, Clone, Default)]
pub struct ContainerInput {
    pub datastore_id: Id,
    pub name: String,
    pub database: Option<String>,
    pub schema: Option<String>,
    pub container_type: Option<String>,
    pub table_type: Option<String>,
    pub display_name: Option<String>,
    pub purpose: Option<String>,
    pub active_anomaly_count: Option<i64>,
    pub fields: Vec<FieldInput>,
    /// A user's own metadata values (recorded as assertions with source `user`, which win).
    pub description: Option<String>,
    pub tags: Option<Vec<String>>,
    pub owners: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Field {
    pub id: Id,
    pub container_id: Id,
    pub name: String,
    pub display_name: Option<String>,
    pub data_type: Option<String>,
    pub status: String,
    pub latest_profile_id: Option<i64>,
    pub is_computed_field: bool,
    pub active_anomaly_count: i64,
}

#[derive(Debug, Clone, Default)]
pub struct FieldInput {
    pub name: String,
    pub data_type: Option<String>,
    pub display_name: Option<String>,
    pub status: Option<String>,
    pub latest_profile_id: Option<i64>,
    pub is_computed_field: Option<bool>,
    pub active_anomaly_count: Option<i64>,
}

/// One end of an edge. A field end remembers its container so traversal and permission checks
/// need no extra lookup.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum End {
    Container {
        id: Id,
    },
    Field {
        id: Id,
        container_id: Id,
    },
    /// An asset that is not in the catalog, spelled as its source names it.
    External {
        fqn: String,
    },
}

impl End {
    pub fn container_id(&self) -> Option<Id> {
        match self {
            End::Container { id } => Some(*id),
            End::Field { container_id, .. } => Some(*container_id),
            End::External { .. } => None,
        }
    }
    /// A stable text key for uniqueness of (source, target, sourceType).
    pub fn key(&self) -> String {
        match self {
            End::Container { id } => format!("c:{id}"),
            End::Field { id, .. } => format!("f:{id}"),
            End::External { fqn } => format!("x:{fqn}"),
        }
    }
    pub fn is_field(&self) -> bool {
        matches!(self, End::Field { .. })
    }
    pub fn external_fqn(&self) -> Option<&str> {
        match self {
            End::External { fqn } => Some(fqn),
            _ => None,
        }
    }
}

/// A span of time during which an edge was live (asserted and not retired).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub from: Timestamp,
    pub to: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    pub id: Id,
    pub created: Timestamp,
    pub source: End,
    pub target: End,
    pub description: Option<String>,
    pub source_type: String,
    pub operation: Option<String>,
    pub derived: Option<bool>,
    /// Field-edge transformations (`[{type, subtype, masking, description}]`), as sent.
    pub transformations: Option<serde_json::Value>,
    pub last_asserted_at: Option<Timestamp>,
    pub retired_at: Option<Timestamp>,
    pub intervals: Vec<Interval>,
}

impl Edge {
    pub fn is_live(&self) -> bool {
        self.retired_at.is_none()
    }
    /// Whether the edge was live at `at`: inside one of its intervals (`from` inclusive, `to`
    /// exclusive). An edge with no recorded interval counts from its creation while unretired,
    /// so rows written before intervals were kept still answer.
    pub fn live_at(&self, at: Timestamp) -> bool {
        live_at(self.created, self.retired_at, self.intervals.iter().map(|i| (i.from, i.to)), at)
    }
    pub fn is_field_edge(&self) -> bool {
        self.source.is_field() || self.target.is_field()
    }
}

/// [`Edge::live_at`] from an edge's parts: inside one of `intervals` (`from` inclusive, `to`
/// exclusive); with none recorded, from `created` while unretired. The one rule: the embedded
/// store's SQL calls it too (`edge_live_at`, store/sqlite/live_at.rs), the Neo4j Cypher spells
/// it (cypher/*_live_at*.cypher).
pub fn live_at(
    created: Timestamp,
    retired_at: Option<Timestamp>,
    mut intervals: impl Iterator<Item = (Timestamp, Option<Timestamp>)>,
    at: Timestamp,
) -> bool {
    let Some(first) = intervals.next() else {
        return created <= at && retired_at.is_none_or(|r| at < r);
    };
    std::iter::once(first).chain(intervals).any(|(from, to)| from <= at && to.is_none_or(|t| at < t))
}

/// What a caller asks a store to create.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEdge {
    pub source: End,
    pub target: End,
    pub description: Option<String>,
    pub source_type: String,
    pub operation: Option<String>,
    pub derived: Option<bool>,
    pub transformations: Option<serde_json::Value>,
    pub last_asserted_at: Option<Timestamp>,
}

/// A change to an edge: `description: Some(None)` clears it, `None` leaves it.
#[derive(Debug, Clone, Default)]
pub struct EdgePatch {
    pub description: Option<Option<String>>,
    pub source_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub edge_id: Id,
    /// Who the evidence belongs to (for OpenLineage, the asserting job); one row per key and edge.
    pub key: String,
    pub provider: String,
    pub evidence_type: String,
    pub authorship: String,
    pub source_relation: Option<String>,
    pub observed_at: Option<Timestamp>,
    pub first_observed_operation_id: Option<i64>,
    pub last_observed_operation_id: Option<i64>,
    pub details: Option<serde_json::Value>,
    pub retired_at: Option<Timestamp>,
}

/// One edge a provider asserts, with the evidence row (keyed by `evidence.key`, e.g. the
/// asserting job) that backs it. Applying it creates the edge or revives a retired one.
#[derive(Debug, Clone, PartialEq)]
pub struct Assertion {
    pub edge: NewEdge,
    /// `edge_id` is ignored: the store fills it in.
    pub evidence: Evidence,
}

/// One source's current value of an asset's attribute (`description`, `tags`, `owners`,
/// `type`). One row per (container, field, attribute, source): independent OpenLineage
/// producers share one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetadataAssertion {
    pub container_id: Id,
    /// Set when the value belongs to one of the container's fields.
    pub field_id: Option<Id>,
    pub attribute: String,
    /// `user`, `sync`, `openlineage` or a data catalog's name.
    pub source: String,
    /// The producer, the catalog, or the user.
    pub provider: String,
    pub value: serde_json::Value,
    /// When the source's value last changed.
    pub asserted_at: Timestamp,
    /// When the source last reported it.
    pub observed_at: Timestamp,
    pub details: Option<serde_json::Value>,
}

/// Which assertion is shown for each (container, field, attribute): a user's own value wins
/// over any source; otherwise the most recently asserted. Returns one flag per input row.
pub fn effective_flags(rows: &[MetadataAssertion]) -> Vec<bool> {
    let mut best: std::collections::HashMap<(Id, Option<Id>, &str), usize> = std::collections::HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        let key = (r.container_id, r.field_id, r.attribute.as_str());
        let better = match best.get(&key) {
            None => true,
            Some(&j) => {
                let cur = &rows[j];
                let rank = |m: &MetadataAssertion| (m.source == "user", m.asserted_at, m.observed_at);
                rank(r) > rank(cur)
            }
        };
        if better {
            best.insert(key, i);
        }
    }
    let chosen: std::collections::HashSet<usize> = best.into_values().collect();
    (0..rows.len()).map(|i| chosen.contains(&i)).collect()
}

/// A container's own metadata as shown: the effective value of each attribute (see
/// `effective_flags`), as plain names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EffectiveMetadata {
    pub description: Option<String>,
    pub owners: Vec<String>,
    pub tags: Vec<String>,
}

/// The effective container-level `description`, `owners` and `tags` among a container's
/// metadata rows (field-level rows are left out). Sources spell values differently: a user
/// gives names (`["ana"]`), OpenLineage objects (`[{"name": "ana", "type": "MAINTAINER"}]`,
/// `[{"key": "pii", "value": "true"}]`); each becomes its name (`name`, else `key`).
pub fn effective_container_metadata(rows: &[MetadataAssertion]) -> EffectiveMetadata {
    fn names(v: &serde_json::Value) -> Vec<String> {
        let one = |x: &serde_json::Value| match x {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Object(o) => {
                o.get("name").or_else(|| o.get("key")).and_then(|n| n.as_str()).map(str::to_string)
            }
            _ => None,
        };
        match v {
            serde_json::Value::Array(items) => items.iter().filter_map(one).collect(),
            other => one(other).into_iter().collect(),
        }
    }
    let mut out = EffectiveMetadata::default();
    for (row, effective) in rows.iter().zip(effective_flags(rows)) {
        if !effective || row.field_id.is_some() {
            continue;
        }
        match row.attribute.as_str() {
            "description" => out.description = row.value.as_str().map(str::to_string),
            "owners" => out.owners = names(&row.value),
            "tags" => out.tags = names(&row.value),
            _ => {}
        }
    }
    out
}

/// What one provider event changes, applied in one transaction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AssertionBatch {
    /// Metadata values the event reports (upserted by (container, field, attribute, source)).
    pub metadata: Vec<MetadataAssertion>,
    pub assert: Vec<Assertion>,
    /// Evidence rows (edge id, key) that no longer assert their edge.
    pub retire_evidence: Vec<(Id, String)>,
    /// Edges to retire if, after the above, no live evidence backs them.
    pub retire_candidates: Vec<Id>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AssertionSummary {
    pub edges_created: i64,
    pub edges_revived: i64,
    pub edges_asserted: i64,
    pub evidence_created: i64,
    pub evidence_retired: i64,
    pub edges_retired: i64,
}

/// An event as received: kept whole so it can be replayed and audited.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredEvent {
    pub id: Id,
    /// Hash of the canonical body: the same event sent twice has the same fingerprint.
    pub fingerprint: String,
    /// `run_event`, `job_event` or `dataset_event`.
    pub kind: String,
    pub job_namespace: Option<String>,
    pub job_name: Option<String>,
    pub run_id: Option<String>,
    pub event_type: Option<String>,
    pub event_time: Option<Timestamp>,
    pub received_at: Timestamp,
    pub submitted_by: Option<String>,
    /// `pending` until applied, then `applied`, `ignored`, `rejected` or `failed`.
    pub status: String,
    pub errors: serde_json::Value,
    pub summary: serde_json::Value,
    pub body: serde_json::Value,
}

/// The outcome of applying a stored event, as `finish_events` records it.
#[derive(Debug, Clone, PartialEq)]
pub struct EventOutcome {
    pub id: Id,
    pub status: String,
    pub errors: serde_json::Value,
    pub summary: serde_json::Value,
}

#[derive(Debug, Clone, Default)]
pub struct EventFilter {
    pub status: Option<String>,
    pub job_namespace: Option<String>,
    pub job_name: Option<String>,
    pub run_id: Option<String>,
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
    /// An ignored event's `ignored_reason` (in its summary): `duplicate`, `late START`, ...
    pub ignored_reason: Option<String>,
}

impl EventFilter {
    /// How an ignored event's reason appears in its stored summary (compact JSON, as stored).
    pub fn reason_text(reason: &str) -> String {
        format!("\"ignored_reason\":{}", serde_json::Value::String(reason.to_string()))
    }
}

/// A window of stored events by their `eventTime`, as Marquez's `/events/lineage` reads them.
#[derive(Debug, Clone, Default)]
pub struct EventTimeWindow {
    /// `eventTime >= after`.
    pub after: Option<Timestamp>,
    /// `eventTime < before`.
    pub before: Option<Timestamp>,
    /// Oldest first; newest first otherwise.
    pub ascending: bool,
    pub offset: i64,
    pub limit: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Towards sources: edges whose target is the node.
    Upstream,
    /// Towards targets: edges whose source is the node.
    Downstream,
}

#[derive(Debug, Clone, Default)]
pub struct EdgeFilter {
    pub container_id: Option<Id>,
    pub field_id: Option<Id>,
    pub source_type: Option<String>,
    pub include_retired: bool,
}

/// A validated page request: `page` from 1, `size` 1..=1000.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub page: i64,
    pub size: i64,
}

impl PageRequest {
    pub fn offset(&self) -> i64 {
        (self.page - 1).saturating_mul(self.size)
    }
}

#[derive(Debug, Clone)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: i64,
    pub page: PageRequest,
}

impl<T> Page<T> {
    pub fn pages(&self) -> i64 {
        if self.total == 0 {
            0
        } else {
            (self.total + self.page.size - 1) / self.page.size
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContainerStats {
    pub container_id: Id,
    pub field_count: i64,
    pub linked_field_count: i64,
}

/// The current time at the precision both stores keep (microseconds), so what a write returns
/// equals what a later read returns.
pub fn now() -> Timestamp {
    use chrono::SubsecRound;
    Utc::now().trunc_subsecs(6)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(source: &str, at: i64) -> MetadataAssertion {
        MetadataAssertion {
            container_id: 1,
            field_id: None,
            attribute: "description".into(),
            source: source.into(),
            provider: "p".into(),
            value: serde_json::json!(source),
            asserted_at: chrono::DateTime::from_timestamp(at, 0).unwrap_or_default(),
            observed_at: chrono::DateTime::from_timestamp(at, 0).unwrap_or_default(),
            details: None,
        }
    }

    #[test]
    fn a_users_value_wins_else_the_latest() {
        assert_eq!(
            effective_flags(&[row("openlineage", 10), row("user", 5), row("alation", 20)]),
            [false, true, false]
        );
        assert_eq!(effective_flags(&[row("openlineage", 10), row("alation", 20)]), [false, true]);
        let mut other_field = row("openlineage", 1);
        other_field.field_id = Some(9);
        assert_eq!(effective_flags(&[row("openlineage", 10), other_field]), [true, true]);
    }
}
