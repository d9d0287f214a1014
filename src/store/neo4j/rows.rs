//! Mapping between domain types and Neo4j properties: the maps sent as `$rows` and the property
//! maps (`n {.*}`, `r {.*}`) read back. Wire details of the Neo4j model live here and nowhere else.
//!
//! Choices that keep values round-tripping exactly:
//! - timestamps are RFC 3339 strings in UTC with microseconds (`2024-05-01T12:00:00.123456Z`):
//!   they sort as text and parse back to the same instant; the store truncates what it is given
//!   to microseconds before writing, so a value read back equals the value written;
//! - JSON values (`transformations`, `details`, `intervals`, an event's `errors`, `summary` and
//!   `body`, and a metadata assertion's `value` and `details`) are JSON strings, since a Neo4j
//!   property cannot hold a map or a list containing null;
//! - an absent optional value is an absent property (Neo4j stores no nulls).

use std::fmt;
use std::marker::PhantomData;

use chrono::SubsecRound;
use neo4rs::{BoltMap, BoltString, BoltType};
use serde::de::value::SeqAccessDeserializer;
use serde::de::{DeserializeOwned, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::domain::{
    container_key, Container, Datastore, Edge, End, Evidence, Field, Id, Interval, MetadataAssertion, StoredEvent,
    Timestamp,
};
use crate::store::{StoreError, StoreResult};

/// A property map read back from Neo4j, turned into its domain type.
pub(super) trait Decode: DeserializeOwned {
    type Out;
    fn decode(self) -> StoreResult<Self::Out>;
}

/// A record read back as a list of its properties in the order of `P`'s fields, decoded as `P`.
/// For reads that return thousands of rows a call (every node of a large graph or impact): a map
/// row costs neo4rs a hash map with an owned key per property, a list a vector. neo4rs reads a
/// struct only from a map, so the list is handed to `P`'s own `Deserialize` as a sequence.
pub(super) struct Positional<P>(P);

impl<'de, P: Deserialize<'de>> Deserialize<'de> for Positional<P> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InOrder<P>(PhantomData<P>);

        impl<'de, P: Deserialize<'de>> Visitor<'de> for InOrder<P> {
            type Value = P;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a record as a list of its properties")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<P, A::Error> {
                P::deserialize(SeqAccessDeserializer::new(seq))
            }
        }

        deserializer.deserialize_seq(InOrder(PhantomData)).map(Positional)
    }
}

impl<P: Decode> Decode for Positional<P> {
    type Out = P::Out;

    fn decode(self) -> StoreResult<P::Out> {
        self.0.decode()
    }
}

/// A Neo4j map parameter from `(key, value)` pairs.
pub(super) fn map<const N: usize>(entries: [(&str, BoltType); N]) -> BoltType {
    BoltType::Map(entries.into_iter().map(|(k, v)| (BoltString::from(k), v)).collect::<BoltMap>())
}

/// A Neo4j list parameter.
pub(super) fn list(items: Vec<BoltType>) -> BoltType {
    BoltType::from(items)
}

/// The precision the store keeps.
pub(super) fn micros(t: Timestamp) -> Timestamp {
    t.trunc_subsecs(6)
}

/// RFC 3339 in UTC with exactly six fractional digits (finer precision is truncated, as by
/// `micros`).
pub(super) fn ts(t: &Timestamp) -> String {
    crate::domain::time::rfc3339_micros(t)
}

pub(super) fn opt_ts(t: Option<&Timestamp>) -> BoltType {
    t.map(ts).into()
}

fn parse_ts(text: &str) -> StoreResult<Timestamp> {
    crate::domain::time::parse_rfc3339(text)
        .map_err(|e| StoreError::Internal(format!("bad timestamp {text:?} in neo4j: {e}")))
}

pub(super) fn parse_opt_ts(text: Option<String>) -> StoreResult<Option<Timestamp>> {
    text.as_deref().map(parse_ts).transpose()
}

pub(super) fn json_text(value: Option<&serde_json::Value>) -> StoreResult<BoltType> {
    value
        .map(serde_json::to_string)
        .transpose()
        .map(BoltType::from)
        .map_err(|e| StoreError::Internal(format!("cannot encode JSON for neo4j: {e}")))
}

fn parse_json(text: Option<String>) -> StoreResult<Option<serde_json::Value>> {
    text.as_deref()
        .map(serde_json::from_str)
        .transpose()
        .map_err(|e| StoreError::Internal(format!("bad JSON in neo4j: {e}")))
}

/// `<datastore id>/<database.schema.name>`: the unique key of a live container.
pub(super) fn container_node_key(datastore_id: Id, database: Option<&str>, schema: Option<&str>, name: &str) -> String {
    format!("{datastore_id}/{}", container_key(database, schema, name))
}

/// `<container id>/<name>`: the unique key of a live field (same text as the Cypher
/// `toString(c.id) + '/' + name` in `upsert_container.cypher`).
pub(super) fn field_node_key(container_id: Id, name: &str) -> String {
    format!("{container_id}/{name}")
}

/// `<source key>|<target key>|<source type>`: what makes an edge unique, live or retired.
pub(super) fn edge_ukey(source: &End, target: &End, source_type: &str) -> String {
    format!("{}|{}|{}", source.key(), target.key(), source_type)
}

// ---- catalog ----

#[derive(Deserialize)]
pub(super) struct DatastoreProps {
    id: Id,
    name: String,
    #[serde(rename = "type")]
    kind: String,
    store_type: Option<String>,
    #[serde(default)]
    namespaces: Vec<String>,
    #[serde(default)]
    enrichment_only: bool,
}

impl Decode for DatastoreProps {
    type Out = Datastore;

    fn decode(self) -> StoreResult<Datastore> {
        let p = self;
        Ok(Datastore {
            id: p.id,
            name: p.name,
            kind: p.kind,
            store_type: p.store_type,
            namespaces: p.namespaces,
            enrichment_only: p.enrichment_only,
        })
    }
}

pub(super) fn datastore_row(d: &Datastore) -> BoltType {
    map([
        ("id", d.id.into()),
        ("name", d.name.clone().into()),
        ("type", d.kind.clone().into()),
        ("store_type", d.store_type.clone().into()),
        ("namespaces", d.namespaces.clone().into()),
        ("enrichment_only", d.enrichment_only.into()),
    ])
}

/// A container's properties, as a map or (`Positional`, in `containers_by_ids`) as a list in this
/// field order.
#[derive(Deserialize)]
pub(super) struct ContainerProps {
    id: Id,
    datastore_id: Id,
    name: String,
    database: Option<String>,
    schema: Option<String>,
    container_type: String,
    table_type: Option<String>,
    display_name: Option<String>,
    purpose: Option<String>,
    #[serde(default)]
    active_anomaly_count: i64,
}

impl Decode for ContainerProps {
    type Out = Container;

    fn decode(self) -> StoreResult<Container> {
        let p = self;
        Ok(Container {
            id: p.id,
            datastore_id: p.datastore_id,
            name: p.name,
            database: p.database,
            schema: p.schema,
            container_type: p.container_type,
            table_type: p.table_type,
            display_name: p.display_name,
            purpose: p.purpose,
            active_anomaly_count: p.active_anomaly_count,
        })
    }
}

/// A live container as `import_containers` writes it.
pub(super) fn container_row(c: &Container) -> BoltType {
    map([
        ("id", c.id.into()),
        ("datastore_id", c.datastore_id.into()),
        ("key", container_node_key(c.datastore_id, c.database.as_deref(), c.schema.as_deref(), &c.name).into()),
        ("name", c.name.clone().into()),
        ("name_lc", c.name.to_lowercase().into()),
        ("database", c.database.clone().into()),
        ("schema", c.schema.clone().into()),
        ("container_type", c.container_type.clone().into()),
        ("table_type", c.table_type.clone().into()),
        ("display_name", c.display_name.clone().into()),
        ("purpose", c.purpose.clone().into()),
        ("active_anomaly_count", c.active_anomaly_count.into()),
        ("deleted", false.into()),
    ])
}

/// A field's properties, as a map or (`Positional`, in `fields_by_ids`) as a list in this field
/// order.
#[derive(Deserialize)]
pub(super) struct FieldProps {
    id: Id,
    container_id: Id,
    name: String,
    display_name: Option<String>,
    data_type: Option<String>,
    status: String,
    latest_profile_id: Option<i64>,
    #[serde(default)]
    is_computed_field: bool,
    #[serde(default)]
    active_anomaly_count: i64,
}

/// A container's id and name (`container_names_by_ids`, as a list in this order).
#[derive(Deserialize)]
pub(super) struct ContainerNameProps {
    id: Id,
    name: String,
}

impl Decode for ContainerNameProps {
    type Out = (Id, String);

    fn decode(self) -> StoreResult<(Id, String)> {
        Ok((self.id, self.name))
    }
}

/// A field's container, id and name (`field_names_by_ids`, as a list in this order).
#[derive(Deserialize)]
pub(super) struct FieldNameProps {
    container_id: Id,
    id: Id,
    name: String,
}

impl Decode for FieldNameProps {
    type Out = (Id, Id, String);

    fn decode(self) -> StoreResult<(Id, Id, String)> {
        Ok((self.container_id, self.id, self.name))
    }
}

impl Decode for FieldProps {
    type Out = Field;

    fn decode(self) -> StoreResult<Field> {
        let p = self;
        Ok(Field {
            id: p.id,
            container_id: p.container_id,
            name: p.name,
            display_name: p.display_name,
            data_type: p.data_type,
            status: p.status,
            latest_profile_id: p.latest_profile_id,
            is_computed_field: p.is_computed_field,
            active_anomaly_count: p.active_anomaly_count,
        })
    }
}

/// A live field as `import_fields` writes it.
pub(super) fn field_row(f: &Field) -> BoltType {
    map([
        ("id", f.id.into()),
        ("container_id", f.container_id.into()),
        ("key", field_node_key(f.container_id, &f.name).into()),
        ("name", f.name.clone().into()),
        ("display_name", f.display_name.clone().into()),
        ("data_type", f.data_type.clone().into()),
        ("status", f.status.clone().into()),
        ("latest_profile_id", f.latest_profile_id.into()),
        ("is_computed_field", f.is_computed_field.into()),
        ("active_anomaly_count", f.active_anomaly_count.into()),
        ("deleted", false.into()),
    ])
}

// ---- edges ----

const CONTAINER: &str = "container";
const FIELD: &str = "field";
const EXTERNAL: &str = "external";

/// `kind`, `id`, `container_id`, `fqn` of one end, as stored on the relationship.
fn end_props(end: &End) -> (&'static str, Option<Id>, Option<Id>, Option<String>) {
    match end {
        End::Container { id } => (CONTAINER, Some(*id), Some(*id), None),
        End::Field { id, container_id } => (FIELD, Some(*id), Some(*container_id), None),
        End::External { fqn } => (EXTERNAL, None, None, Some(fqn.clone())),
    }
}

fn end_from(kind: &str, id: Option<Id>, container_id: Option<Id>, fqn: Option<String>) -> StoreResult<End> {
    let bad = || StoreError::Internal(format!("bad lineage end in neo4j: kind {kind:?}"));
    match kind {
        CONTAINER => Ok(End::Container { id: id.ok_or_else(bad)? }),
        FIELD => Ok(End::Field { id: id.ok_or_else(bad)?, container_id: container_id.ok_or_else(bad)? }),
        EXTERNAL => Ok(End::External { fqn: fqn.ok_or_else(bad)? }),
        _ => Err(bad()),
    }
}

/// A container or field end: what `missing_edge_ends` checks.
pub(super) fn catalog_end(end: &End) -> Option<BoltType> {
    match end {
        End::Container { id } => Some(map([("kind", CONTAINER.into()), ("id", (*id).into())])),
        End::Field { id, .. } => Some(map([("kind", FIELD.into()), ("id", (*id).into())])),
        End::External { .. } => None,
    }
}

/// The message of `StoreError::NotFound` for an end `missing_edge_ends` reported.
pub(super) fn missing_end_message(kind: &str, id: Id) -> String {
    match kind {
        FIELD => format!("Field {id} not found"),
        _ => format!("Container {id} not found"),
    }
}

#[derive(Serialize, Deserialize)]
struct IntervalText {
    from: String,
    to: Option<String>,
}

pub(super) fn intervals_text(intervals: &[Interval]) -> StoreResult<String> {
    let texts: Vec<IntervalText> =
        intervals.iter().map(|i| IntervalText { from: ts(&i.from), to: i.to.as_ref().map(ts) }).collect();
    serde_json::to_string(&texts).map_err(|e| StoreError::Internal(format!("cannot encode intervals for neo4j: {e}")))
}

pub(super) fn parse_intervals(text: Option<&str>) -> StoreResult<Vec<Interval>> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    let texts: Vec<IntervalText> =
        serde_json::from_str(text).map_err(|e| StoreError::Internal(format!("bad intervals in neo4j: {e}")))?;
    texts.into_iter().map(|i| Ok(Interval { from: parse_ts(&i.from)?, to: parse_opt_ts(i.to)? })).collect()
}

/// Every property of a LINEAGE relationship, for `create_edges` and `import_edges`
/// (`SET r = row`).
pub(super) fn edge_row(e: &Edge) -> StoreResult<BoltType> {
    let (source_kind, source_id, source_container_id, source_fqn) = end_props(&e.source);
    let (target_kind, target_id, target_container_id, target_fqn) = end_props(&e.target);
    Ok(map([
        ("id", e.id.into()),
        ("ukey", edge_ukey(&e.source, &e.target, &e.source_type).into()),
        ("created", ts(&e.created).into()),
        ("description", e.description.clone().into()),
        ("source_type", e.source_type.clone().into()),
        ("operation", e.operation.clone().into()),
        ("derived", e.derived.into()),
        ("transformations", json_text(e.transformations.as_ref())?),
        ("last_asserted_at", opt_ts(e.last_asserted_at.as_ref())),
        ("retired_at", opt_ts(e.retired_at.as_ref())),
        ("intervals", intervals_text(&e.intervals)?.into()),
        ("source_kind", source_kind.into()),
        ("source_id", source_id.into()),
        ("source_container_id", source_container_id.into()),
        ("source_fqn", source_fqn.into()),
        ("target_kind", target_kind.into()),
        ("target_id", target_id.into()),
        ("target_container_id", target_container_id.into()),
        ("target_fqn", target_fqn.into()),
    ]))
}

#[derive(Deserialize)]
pub(super) struct EdgeProps {
    id: Id,
    created: String,
    description: Option<String>,
    source_type: String,
    operation: Option<String>,
    derived: Option<bool>,
    transformations: Option<String>,
    last_asserted_at: Option<String>,
    retired_at: Option<String>,
    intervals: Option<String>,
    source_kind: String,
    source_id: Option<Id>,
    source_container_id: Option<Id>,
    source_fqn: Option<String>,
    target_kind: String,
    target_id: Option<Id>,
    target_container_id: Option<Id>,
    target_fqn: Option<String>,
}

impl Decode for EdgeProps {
    type Out = Edge;

    fn decode(self) -> StoreResult<Edge> {
        let p = self;
        Ok(Edge {
            id: p.id,
            created: parse_ts(&p.created)?,
            source: end_from(&p.source_kind, p.source_id, p.source_container_id, p.source_fqn)?,
            target: end_from(&p.target_kind, p.target_id, p.target_container_id, p.target_fqn)?,
            description: p.description,
            source_type: p.source_type,
            operation: p.operation,
            derived: p.derived,
            transformations: parse_json(p.transformations)?,
            last_asserted_at: parse_opt_ts(p.last_asserted_at)?,
            retired_at: parse_opt_ts(p.retired_at)?,
            intervals: parse_intervals(p.intervals.as_deref())?,
        })
    }
}

// ---- evidence ----

/// Every property of an Evidence node, for `put_evidence` (`SET e = row`).
pub(super) fn evidence_row(e: &Evidence) -> StoreResult<BoltType> {
    Ok(map([
        ("edge_id", e.edge_id.into()),
        ("key", e.key.clone().into()),
        ("provider", e.provider.clone().into()),
        ("evidence_type", e.evidence_type.clone().into()),
        ("authorship", e.authorship.clone().into()),
        ("source_relation", e.source_relation.clone().into()),
        ("observed_at", opt_ts(e.observed_at.as_ref())),
        ("first_observed_operation_id", e.first_observed_operation_id.into()),
        ("last_observed_operation_id", e.last_observed_operation_id.into()),
        ("details", json_text(e.details.as_ref())?),
        ("retired_at", opt_ts(e.retired_at.as_ref())),
    ]))
}

#[derive(Deserialize)]
pub(super) struct EvidenceProps {
    edge_id: Id,
    key: String,
    provider: String,
    evidence_type: String,
    authorship: String,
    source_relation: Option<String>,
    observed_at: Option<String>,
    first_observed_operation_id: Option<i64>,
    last_observed_operation_id: Option<i64>,
    details: Option<String>,
    retired_at: Option<String>,
}

impl Decode for EvidenceProps {
    type Out = Evidence;

    fn decode(self) -> StoreResult<Evidence> {
        let p = self;
        Ok(Evidence {
            edge_id: p.edge_id,
            key: p.key,
            provider: p.provider,
            evidence_type: p.evidence_type,
            authorship: p.authorship,
            source_relation: p.source_relation,
            observed_at: parse_opt_ts(p.observed_at)?,
            first_observed_operation_id: p.first_observed_operation_id,
            last_observed_operation_id: p.last_observed_operation_id,
            details: parse_json(p.details)?,
            retired_at: parse_opt_ts(p.retired_at)?,
        })
    }
}

// ---- metadata ----

/// Every property of a Metadata node, for `put_metadata`. `field_id` is 0 for a container's own
/// value (a uniqueness constraint cannot key on an absent property); `value` is always stored,
/// `null` as the text `null`, as the embedded store does.
pub(super) fn metadata_row(m: &MetadataAssertion) -> StoreResult<BoltType> {
    Ok(map([
        ("container_id", m.container_id.into()),
        ("field_id", m.field_id.unwrap_or(0).into()),
        ("attribute", m.attribute.clone().into()),
        ("source", m.source.clone().into()),
        ("provider", m.provider.clone().into()),
        ("value", json_text(Some(&m.value))?),
        ("asserted_at", ts(&m.asserted_at).into()),
        ("observed_at", ts(&m.observed_at).into()),
        ("details", json_text(m.details.as_ref())?),
    ]))
}

#[derive(Deserialize)]
pub(super) struct MetadataProps {
    container_id: Id,
    #[serde(default)]
    field_id: Id,
    attribute: String,
    source: String,
    provider: String,
    value: Option<String>,
    asserted_at: String,
    observed_at: String,
    details: Option<String>,
}

impl Decode for MetadataProps {
    type Out = MetadataAssertion;

    fn decode(self) -> StoreResult<MetadataAssertion> {
        let p = self;
        Ok(MetadataAssertion {
            container_id: p.container_id,
            field_id: (p.field_id != 0).then_some(p.field_id),
            attribute: p.attribute,
            source: p.source,
            provider: p.provider,
            value: parse_json(p.value)?.unwrap_or_default(),
            asserted_at: parse_ts(&p.asserted_at)?,
            observed_at: parse_ts(&p.observed_at)?,
            details: parse_json(p.details)?,
        })
    }
}

// ---- events ----

/// Every property of an Event node, for `insert_event` and `import_events` (`SET e = row`). The
/// JSON values are always stored (as text), `null` included, as the embedded store does.
pub(super) fn event_row(e: &StoredEvent) -> StoreResult<BoltType> {
    Ok(map([
        ("id", e.id.into()),
        ("fingerprint", e.fingerprint.clone().into()),
        ("kind", e.kind.clone().into()),
        ("job_namespace", e.job_namespace.clone().into()),
        ("job_name", e.job_name.clone().into()),
        ("run_id", e.run_id.clone().into()),
        ("event_type", e.event_type.clone().into()),
        ("event_time", opt_ts(e.event_time.as_ref())),
        ("received_at", ts(&e.received_at).into()),
        ("submitted_by", e.submitted_by.clone().into()),
        ("status", e.status.clone().into()),
        ("errors", json_text(Some(&e.errors))?),
        ("summary", json_text(Some(&e.summary))?),
        ("body", json_text(Some(&e.body))?),
    ]))
}

/// A JSON value as the text `finish_event` stores.
pub(super) fn json_string(value: &serde_json::Value) -> StoreResult<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Internal(format!("cannot encode JSON for neo4j: {e}")))
}

#[derive(Deserialize)]
pub(super) struct EventProps {
    id: Id,
    fingerprint: String,
    kind: String,
    job_namespace: Option<String>,
    job_name: Option<String>,
    run_id: Option<String>,
    event_type: Option<String>,
    event_time: Option<String>,
    received_at: String,
    submitted_by: Option<String>,
    status: String,
    errors: Option<String>,
    summary: Option<String>,
    body: Option<String>,
}

impl Decode for EventProps {
    type Out = StoredEvent;

    fn decode(self) -> StoreResult<StoredEvent> {
        let p = self;
        let json = |text: Option<String>| parse_json(text).map(Option::unwrap_or_default);
        Ok(StoredEvent {
            id: p.id,
            fingerprint: p.fingerprint,
            kind: p.kind,
            job_namespace: p.job_namespace,
            job_name: p.job_name,
            run_id: p.run_id,
            event_type: p.event_type,
            event_time: parse_opt_ts(p.event_time)?,
            received_at: parse_ts(&p.received_at)?,
            submitted_by: p.submitted_by,
            status: p.status,
            errors: json(p.errors)?,
            summary: json(p.summary)?,
            body: json(p.body)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    #[test]
    fn timestamps_keep_microseconds() {
        let t =
            Utc.with_ymd_and_hms(2024, 5, 1, 12, 0, 0).single().map(|t| t + chrono::Duration::nanoseconds(123_456_789));
        let Some(t) = t else { panic!("valid date") };
        let text = ts(&micros(t));
        assert_eq!(text, "2024-05-01T12:00:00.123456Z");
        assert_eq!(parse_ts(&text).ok(), Some(micros(t)));
    }

    #[test]
    fn intervals_round_trip() {
        let from = micros(Utc::now());
        let intervals =
            vec![Interval { from, to: Some(from + chrono::Duration::seconds(5)) }, Interval { from, to: None }];
        let text = intervals_text(&intervals).ok();
        assert_eq!(parse_intervals(text.as_deref()).ok(), Some(intervals));
        assert_eq!(parse_intervals(None).ok(), Some(Vec::new()));
    }

    #[test]
    fn keys_match_the_cypher_spelling() {
        assert_eq!(container_node_key(3, Some("db"), None, "t"), "3/db.t");
        assert_eq!(field_node_key(12, "amount"), "12/amount");
        let source = End::Field { id: 1, container_id: 2 };
        let target = End::External { fqn: "s3://b/k".into() };
        assert_eq!(edge_ukey(&source, &target, "manual"), "f:1|x:s3://b/k|manual");
    }
}
