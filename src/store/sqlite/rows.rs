//! Row <-> domain mapping for the embedded store: the column list of each table as the reads
//! select it, the `*_row` functions that turn a row into its domain value, how an edge's ends
//! and timestamps are stored, and the `rarray` parameters the batched reads bind. What a column
//! holds is decided here and nowhere else.

use std::rc::Rc;

use rusqlite::types::Value as SqlValue;
use rusqlite::Row;

use crate::domain::{Container, Datastore, Edge, End, Evidence, Field, Id, StoredEvent, Timestamp};

/// A JSON value's text, as `to_string` writes it. `Display` goes through `fmt::Formatter` a
/// token at a time; this writes into one buffer, a third cheaper for the evidence details and
/// event bodies every ingested event stores.
pub(super) fn json_text(v: &serde_json::Value) -> String {
    // A `Value` always serializes (its keys are strings); the fallback is never taken.
    serde_json::to_string(v).unwrap_or_else(|_| v.to_string())
}

/// A timestamp as this store writes it (text that sorts in time order; the SQL compares it).
pub(super) use crate::domain::time::rfc3339_micros as ts;
use crate::domain::time::{parse_rfc3339, push_rfc3339_auto};

/// An edge's `intervals` column as `serde_json::to_string` writes it (the same text), without
/// serde's and chrono's general machinery: every edge an event asserts writes one.
pub(super) fn intervals_text(intervals: &[crate::domain::Interval]) -> String {
    let mut s = String::with_capacity(2 + intervals.len() * 64);
    s.push('[');
    for (i, iv) in intervals.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str("{\"from\":\"");
        push_rfc3339_auto(&mut s, &iv.from);
        s.push_str("\",\"to\":");
        match &iv.to {
            Some(to) => {
                s.push('"');
                push_rfc3339_auto(&mut s, to);
                s.push('"');
            }
            None => s.push_str("null"),
        }
        s.push('}');
    }
    s.push(']');
    s
}

pub(super) fn parse_ts(s: Option<String>) -> rusqlite::Result<Option<Timestamp>> {
    s.map(|s| parse_one_ts(&s)).transpose()
}

fn parse_one_ts(s: &str) -> rusqlite::Result<Timestamp> {
    parse_rfc3339(s).map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e)))
}

/// An edge's `intervals` column: JSON of `[{"from": ts, "to": ts | null}]`.
pub(super) fn intervals_col(s: &str) -> Vec<crate::domain::Interval> {
    #[derive(serde::Deserialize)]
    struct Raw<'a> {
        #[serde(borrow)]
        from: std::borrow::Cow<'a, str>,
        #[serde(borrow)]
        to: Option<std::borrow::Cow<'a, str>>,
    }
    // As before: a column that does not read whole reads as no intervals.
    let Ok(raw) = serde_json::from_str::<Vec<Raw>>(s) else { return Vec::new() };
    raw.into_iter()
        .map(|r| {
            let from = parse_one_ts(&r.from).ok()?;
            let to = match r.to {
                Some(t) => Some(parse_one_ts(&t).ok()?),
                None => None,
            };
            Some(crate::domain::Interval { from, to })
        })
        .collect::<Option<_>>()
        .unwrap_or_default()
}

/// A nullable timestamp column, read without copying it out of the row.
fn ts_at(r: &Row, index: usize) -> rusqlite::Result<Option<Timestamp>> {
    r.get_ref(index)?.as_str_or_null()?.map(parse_one_ts).transpose()
}

pub(super) fn json_col(s: Option<String>) -> rusqlite::Result<Option<serde_json::Value>> {
    s.map(|s| {
        serde_json::from_str(&s)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e)))
    })
    .transpose()
}

pub(super) fn id_array(ids: &[Id]) -> Rc<Vec<SqlValue>> {
    Rc::new(ids.iter().map(|i| SqlValue::Integer(*i)).collect())
}

pub(super) fn str_array(items: &[String]) -> Rc<Vec<SqlValue>> {
    Rc::new(items.iter().map(|s| SqlValue::Text(s.clone())).collect())
}

/// `ids` once each, sorted: the batched reads join the `rarray` of them instead of
/// testing `IN rarray(..)`, which SQLite answers by first copying the array into a temporary
/// b-tree (a fifth of an ingested event's reads went to creating those).
pub(super) fn distinct_ids(ids: &[Id]) -> Rc<Vec<SqlValue>> {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    id_array(&ids)
}

/// `items` once each, sorted, as an `rarray` parameter (see `distinct_ids`).
pub(super) fn distinct_strs(items: &[String]) -> Rc<Vec<SqlValue>> {
    let mut items = items.to_vec();
    items.sort_unstable();
    items.dedup();
    str_array(&items)
}

pub(super) const DATASTORE_COLS: &str = "id, name, type, store_type, namespaces, enrichment_only";
pub(super) fn datastore_row(r: &Row) -> rusqlite::Result<Datastore> {
    let ns: String = r.get(4)?;
    Ok(Datastore {
        id: r.get(0)?,
        name: r.get(1)?,
        kind: r.get(2)?,
        store_type: r.get(3)?,
        namespaces: serde_json::from_str(&ns).unwrap_or_default(),
        enrichment_only: r.get(5)?,
    })
}

pub(super) const CONTAINER_COLS: &str =
    "id, datastore_id, name, database, schema, container_type, table_type, display_name, purpose, active_anomaly_count";
pub(super) fn container_row(r: &Row) -> rusqlite::Result<Container> {
    Ok(Container {
        id: r.get(0)?,
        datastore_id: r.get(1)?,
        name: r.get(2)?,
        database: r.get(3)?,
        schema: r.get(4)?,
        container_type: r.get(5)?,
        table_type: r.get(6)?,
        display_name: r.get(7)?,
        purpose: r.get(8)?,
        active_anomaly_count: r.get(9)?,
    })
}

pub(super) const FIELD_COLS: &str = "id, container_id, name, display_name, data_type, status, latest_profile_id, is_computed_field, active_anomaly_count";
pub(super) fn field_row(r: &Row) -> rusqlite::Result<Field> {
    Ok(Field {
        id: r.get(0)?,
        container_id: r.get(1)?,
        name: r.get(2)?,
        display_name: r.get(3)?,
        data_type: r.get(4)?,
        status: r.get(5)?,
        latest_profile_id: r.get(6)?,
        is_computed_field: r.get(7)?,
        active_anomaly_count: r.get(8)?,
    })
}

pub(super) const EDGE_COLS: &str = "id, created, source_kind, source_id, source_container_id, source_fqn, target_kind, target_id, target_container_id, target_fqn, description, source_type, operation, derived, transformations, last_asserted_at, retired_at, intervals";

pub(super) fn end_from(kind: &str, id: Option<Id>, container: Option<Id>, fqn: Option<String>) -> End {
    match kind {
        "c" => End::Container { id: id.unwrap_or_default() },
        "f" => End::Field { id: id.unwrap_or_default(), container_id: container.unwrap_or_default() },
        _ => End::External { fqn: fqn.unwrap_or_default() },
    }
}

/// (kind, id, container id, fqn) columns of an end.
pub(super) fn end_cols(end: &End) -> (&'static str, Option<Id>, Option<Id>, Option<String>) {
    match end {
        End::Container { id } => ("c", Some(*id), Some(*id), None),
        End::Field { id, container_id } => ("f", Some(*id), Some(*container_id), None),
        End::External { fqn } => ("x", None, None, Some(fqn.clone())),
    }
}

pub(super) fn edge_row(r: &Row) -> rusqlite::Result<Edge> {
    // Borrowed from the row where the value is only looked at (a graph answer reads thousands).
    let source_kind = r.get_ref(2)?.as_str()?;
    let target_kind = r.get_ref(6)?.as_str()?;
    Ok(Edge {
        id: r.get(0)?,
        created: ts_at(r, 1)?.unwrap_or_default(),
        source: end_from(source_kind, r.get(3)?, r.get(4)?, r.get(5)?),
        target: end_from(target_kind, r.get(7)?, r.get(8)?, r.get(9)?),
        description: r.get(10)?,
        source_type: r.get(11)?,
        operation: r.get(12)?,
        derived: r.get(13)?,
        transformations: json_col(r.get(14)?)?,
        last_asserted_at: ts_at(r, 15)?,
        retired_at: ts_at(r, 16)?,
        intervals: intervals_col(r.get_ref(17)?.as_str()?),
    })
}

pub(super) const EVENT_COLS: &str = "id, fingerprint, kind, job_namespace, job_name, run_id, event_type, event_time, received_at, submitted_by, status, errors, summary, body";
pub(super) fn event_row(r: &Row) -> rusqlite::Result<StoredEvent> {
    Ok(StoredEvent {
        id: r.get(0)?,
        fingerprint: r.get(1)?,
        kind: r.get(2)?,
        job_namespace: r.get(3)?,
        job_name: r.get(4)?,
        run_id: r.get(5)?,
        event_type: r.get(6)?,
        event_time: parse_ts(r.get(7)?)?,
        received_at: parse_ts(r.get(8)?)?.unwrap_or_default(),
        submitted_by: r.get(9)?,
        status: r.get(10)?,
        errors: json_col(r.get(11)?)?.unwrap_or(serde_json::Value::Null),
        summary: json_col(r.get(12)?)?.unwrap_or(serde_json::Value::Null),
        body: json_col(r.get(13)?)?.unwrap_or(serde_json::Value::Null),
    })
}

pub(super) const METADATA_COLS: &str =
    "container_id, field_id, attribute, source, provider, value, asserted_at, observed_at, details";
pub(super) fn metadata_row(r: &Row) -> rusqlite::Result<crate::domain::MetadataAssertion> {
    let field: Id = r.get(1)?;
    Ok(crate::domain::MetadataAssertion {
        container_id: r.get(0)?,
        field_id: (field != 0).then_some(field),
        attribute: r.get(2)?,
        source: r.get(3)?,
        provider: r.get(4)?,
        value: json_col(r.get(5)?)?.unwrap_or(serde_json::Value::Null),
        asserted_at: parse_ts(r.get(6)?)?.unwrap_or_default(),
        observed_at: parse_ts(r.get(7)?)?.unwrap_or_default(),
        details: json_col(r.get(8)?)?,
    })
}

/// An edge's unique key: its ends' keys and its source type (the `ukey` column).
pub fn edge_ukey(source: &End, target: &End, source_type: &str) -> String {
    format!("{}|{}|{}", source.key(), target.key(), source_type)
}

pub(super) const EVIDENCE_COLS: &str = "edge_id, key, provider, evidence_type, authorship, source_relation, observed_at, first_observed_operation_id, last_observed_operation_id, details, retired_at";
pub(super) fn evidence_row(r: &Row) -> rusqlite::Result<Evidence> {
    Ok(Evidence {
        edge_id: r.get(0)?,
        key: r.get(1)?,
        provider: r.get(2)?,
        evidence_type: r.get(3)?,
        authorship: r.get(4)?,
        source_relation: r.get(5)?,
        observed_at: parse_ts(r.get(6)?)?,
        first_observed_operation_id: r.get(7)?,
        last_observed_operation_id: r.get(8)?,
        details: json_col(r.get(9)?)?,
        retired_at: parse_ts(r.get(10)?)?,
    })
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};

    use super::*;

    #[test]
    fn intervals_are_written_as_serde_writes_them() {
        use crate::domain::Interval;
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        let times = [
            Utc::now(),
            at("2026-12-03T10:00:00Z"),
            at("2026-12-03T10:00:00.5Z"),
            at("2026-12-03T23:59:59.123456789Z"),
            at("2026-12-03T23:59:59.123456Z"),
            at("2016-12-31T23:59:60.5Z"),
            DateTime::from_timestamp(300_000_000_000, 7).unwrap(),
        ];
        let intervals: Vec<Interval> = times
            .windows(2)
            .enumerate()
            .map(|(i, w)| Interval { from: w[0], to: (i % 3 != 0).then_some(w[1]) })
            .collect();
        assert_eq!(intervals_text(&intervals), serde_json::to_string(&intervals).unwrap());
        assert_eq!(intervals_text(&[]), "[]");
    }

    #[test]
    fn intervals_read_as_serde_reads_them() {
        let now = Utc::now();
        let intervals = vec![
            crate::domain::Interval {
                from: now - chrono::Duration::days(3),
                to: Some(now - chrono::Duration::days(1)),
            },
            crate::domain::Interval { from: now, to: None },
        ];
        let json = serde_json::to_string(&intervals).unwrap();
        assert_eq!(intervals_col(&json), intervals);
        assert_eq!(intervals_col("[]"), vec![]);
        assert_eq!(intervals_col("not json"), vec![]);
    }
}
