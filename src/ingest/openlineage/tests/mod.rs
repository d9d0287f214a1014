//! Tests of the OpenLineage module: one file per concern, sharing the helpers below.
//!
//! - `body`: gzip, size limits and the JSON body rules (400/413);
//! - `envelope`: the event rules of seed 000 (kind, eventTime, URIs, ids, eventType, datasets,
//!   the relationship limit), each asserting the JSON pointer and the message;
//! - `facets`: the facets Tributary applies, column lineage in every shape, warnings;
//! - `fixtures`: the shared reference corpus (`/work/shared/fixtures/openlineage`) and the
//!   project's own fixtures (`tests/fixtures/openlineage`);
//! - `garbage`: random and mutated input never panics.

mod body;
mod envelope;
mod facets;
mod fixtures;
mod garbage;

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::{validate, Event, Limits, ValidationIssue};

/// The fixed "now" of these tests: after every fixture's eventTime.
fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").expect("valid time").with_timezone(&Utc)
}

/// A minimal valid RunEvent to modify.
fn run_event() -> Value {
    json!({
        "eventType": "COMPLETE",
        "eventTime": "2025-12-31T23:00:00Z",
        "producer": "https://github.com/acme/exporter",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": { "runId": "3f1c9a2e-7b41-4c1e-9d55-0a2f6c1e8b90" },
        "job": { "namespace": "nightly", "name": "load_orders" },
        "inputs": [ { "namespace": "postgres://db:5432", "name": "shop.public.raw_orders" } ],
        "outputs": [ { "namespace": "postgres://db:5432", "name": "shop.public.orders" } ]
    })
}

fn ok(event: &Value) -> Event {
    match validate(event, now(), &Limits::default()) {
        Ok(e) => e,
        Err(issues) => panic!("expected a valid event, got {issues:#?}"),
    }
}

fn errors(event: &Value) -> Vec<ValidationIssue> {
    match validate(event, now(), &Limits::default()) {
        Ok(e) => panic!("expected a rejected event, got {e:#?}"),
        Err(issues) => issues,
    }
}

/// The one error of a rejected event, asserting there is exactly one.
fn single_error(event: &Value) -> ValidationIssue {
    let mut issues = errors(event);
    assert_eq!(issues.len(), 1, "expected exactly one issue, got {issues:#?}");
    issues.remove(0)
}

/// Sets the value at a JSON pointer, creating objects on the way.
fn set(event: &mut Value, pointer: &str, value: Value) {
    let (parent, last) = pointer.rsplit_once('/').expect("a pointer");
    let target = event.pointer_mut(parent).expect("parent exists");
    match target {
        Value::Object(map) => {
            map.insert(last.to_string(), value);
        }
        Value::Array(items) => {
            let i: usize = last.parse().expect("an index");
            items[i] = value;
        }
        other => panic!("cannot set into {other}"),
    }
}

fn remove(event: &mut Value, pointer: &str) {
    let (parent, last) = pointer.rsplit_once('/').expect("a pointer");
    event.pointer_mut(parent).and_then(Value::as_object_mut).expect("parent object").remove(last);
}
