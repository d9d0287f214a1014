//! What each fuzz target does with one input, shared by the targets (`fuzz_targets/*.rs`) and by
//! the regression test that replays saved crashers (`tests/hostile.rs`, through `#[path]`), so a
//! crasher replays through exactly the code that found it.
//!
//! Every entry point panics when an input breaks an invariant (libFuzzer reports a panic as a
//! crash and keeps the input), and returns what the input got, as JSON: accepted with this
//! answer, or refused with this status or code. The fuzz targets drop it; the replay compares it
//! with the outcome each saved input records (`fuzz-regressions/expected.json`).

#![allow(dead_code)]

use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use chrono::TimeZone;
use serde_json::{json, Value};
use tower::ServiceExt;
use tributary::domain::{now, ContainerInput, DatastoreInput, End, FieldInput, NewEdge};
use tributary::ingest::openlineage::{
    decode_body, event_fingerprint, parse_batch_body, parse_body, validate, BodyError, Limits,
};
use tributary::store::sqlite::SqliteStore;
use tributary::store::Store;

/// `openlineage_body`: the REST ingest's pure half, as `api::openlineage` runs it, on any bytes.
///
/// The first byte chooses the path, the rest is the body: bit 0 says `Content-Encoding: gzip`,
/// bit 1 picks seed 002's batch parser instead of seed 000's, bit 2 uses small limits (64 KiB,
/// 4 events, nesting 8) so the fuzzer reaches the limit checks with short inputs. Every event
/// that parses is fingerprinted (as each one is before it is stored) and validated.
///
/// The outcome: `{"refused": 413 | 400}` (the status the route answers for the body), or
/// `{"events": [...]}` with each event's `"valid"` or the JSON pointers of its issues (a 422).
pub fn openlineage_body(data: &[u8]) -> Value {
    let Some((&mode, body)) = data.split_first() else { return json!({"empty": true}) };
    let gzip = mode & 1 != 0;
    let batch = mode & 2 != 0;
    let limits = if mode & 4 != 0 {
        Limits { max_body_bytes: 64 * 1024, max_events: 4, max_nesting: 8, ..Limits::default() }
    } else {
        Limits::default()
    };
    let bytes = match decode_body(body, gzip, &limits) {
        Ok(b) => b,
        Err(e) => return refused_body(&e),
    };
    assert!(bytes.len() <= limits.max_body_bytes, "decode_body let {} bytes past the limit", bytes.len());
    let parsed = if batch { parse_batch_body(&bytes, &limits) } else { parse_body(&bytes, &limits) };
    let parsed = match parsed {
        Ok(p) => p,
        Err(e) => return refused_body(&e),
    };
    assert!(parsed.events.len() <= limits.max_events, "{} events passed the body rules", parsed.events.len());
    // A fixed "now", so an input replays the same way tomorrow.
    let now = chrono::Utc.with_ymd_and_hms(2025, 6, 1, 12, 0, 0).single().unwrap_or_default();
    let mut events = Vec::new();
    for event in &parsed.events {
        let fingerprint = event_fingerprint(event);
        assert!(!fingerprint.is_empty(), "empty fingerprint");
        match validate(event, now, &limits) {
            Ok(e) => {
                assert!(e.event_time <= now + limits.max_future, "an event from the future was accepted");
                let _ = e.relationship_count();
                events.push(json!("valid"));
            }
            Err(issues) => {
                assert!(!issues.is_empty(), "a rejected event with no issue");
                assert!(issues.len() <= tributary::ingest::openlineage::MAX_ISSUES + 1, "{} issues", issues.len());
                events.push(json!(issues.iter().map(|i| i.pointer.as_str()).collect::<Vec<_>>()));
            }
        }
    }
    json!({ "events": events })
}

/// A refused body: the status the route answers with it, and never without a message.
fn refused_body(e: &BodyError) -> Value {
    let (BodyError::TooLarge(m) | BodyError::BadRequest(m)) = e;
    assert!(!m.is_empty(), "a body error without a message");
    let status = match e {
        BodyError::TooLarge(_) => 413,
        BodyError::BadRequest(_) => 400,
    };
    json!({ "refused": status })
}

/// `graphql_request`: one request through the real HTTP handler (`server::app`: body limit,
/// JSON, alias cap, depth and complexity limits, resolvers) over an embedded store holding a
/// small catalog, authentication off so every mutation is reachable.
///
/// An input starting with 0xFF (never UTF-8) is sent as the raw body; any other input is the
/// text of the `query`, wrapped in a well-formed request, so the fuzzer spends its time on
/// GraphQL rather than on JSON. Invariants: no panic, no 5xx, a JSON answer whose every error
/// carries `extensions.code`, and never `INTERNAL` (hostile input must not reach a store error).
/// The outcome: `{"status": ..}` with the answer's `data` when it has no error, or its errors'
/// `codes` when it has some.
pub struct GraphqlHarness {
    runtime: tokio::runtime::Runtime,
    app: axum::Router,
    _dir: tempfile::TempDir,
}

impl GraphqlHarness {
    pub fn new() -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
        let dir = tempfile::tempdir().expect("temp dir");
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path()).expect("open the embedded store"));
        runtime.block_on(seed(&store));
        let app = tributary::server::app(tributary::service::Lineage::new(store), false, &[]);
        GraphqlHarness { runtime, app, _dir: dir }
    }

    pub fn request(&self, data: &[u8]) -> Value {
        let body = match data.split_first() {
            Some((0xFF, raw)) => raw.to_vec(),
            _ => serde_json::to_vec(&serde_json::json!({ "query": String::from_utf8_lossy(data) }))
                .expect("a JSON string always serializes"),
        };
        let request = Request::post("/graphql")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body))
            .expect("a valid request");
        let app = self.app.clone();
        let (status, bytes) = self.runtime.block_on(async move {
            let response = app.oneshot(request).await.expect("the router is infallible");
            let status = response.status();
            let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("the body is readable");
            (status, bytes)
        });
        assert!(!status.is_server_error(), "status {status}: {}", String::from_utf8_lossy(&bytes));
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            return json!({ "status": status.as_u16() });
        }
        let answer: Value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("status {status} with a body that is not JSON ({e}): {bytes:?}"));
        let mut codes = Vec::new();
        for error in answer.get("errors").and_then(Value::as_array).into_iter().flatten() {
            let code = error.pointer("/extensions/code").and_then(Value::as_str);
            assert!(code.is_some(), "an error without extensions.code: {error}");
            assert_ne!(code, Some("INTERNAL"), "hostile input reached an internal error: {error}");
            codes.extend(code.map(str::to_string));
        }
        if codes.is_empty() {
            json!({ "status": status.as_u16(), "data": answer.get("data") })
        } else {
            json!({ "status": status.as_u16(), "codes": codes })
        }
    }
}

impl Default for GraphqlHarness {
    fn default() -> Self {
        Self::new()
    }
}

/// Two datastores, three containers with fields, and container and field edges between them.
async fn seed(store: &Arc<dyn Store>) {
    let ds = store
        .upsert_datastore(DatastoreInput {
            name: "warehouse".into(),
            kind: "snowflake".into(),
            namespaces: vec!["snowflake://acme".into()],
            ..Default::default()
        })
        .await
        .expect("seed datastore");
    let mut ends = Vec::new();
    for name in ["orders", "customers", "report"] {
        let (c, fields) = store
            .upsert_container(ContainerInput {
                datastore_id: ds.id,
                name: name.into(),
                schema: Some("public".into()),
                fields: ["id", "amount", "email"]
                    .iter()
                    .map(|f| FieldInput { name: (*f).into(), data_type: Some("string".into()), ..Default::default() })
                    .collect(),
                ..Default::default()
            })
            .await
            .expect("seed container");
        ends.push((c.id, fields.iter().map(|f| f.id).collect::<Vec<_>>()));
    }
    let edge = |source: End, target: End| NewEdge {
        source,
        target,
        description: Some("seed".into()),
        source_type: "manual".into(),
        operation: None,
        derived: None,
        transformations: None,
        last_asserted_at: None,
    };
    let (orders, report) = (&ends[0], &ends[2]);
    let customers = &ends[1];
    let edges = vec![
        edge(End::Container { id: orders.0 }, End::Container { id: report.0 }),
        edge(End::Container { id: customers.0 }, End::Container { id: report.0 }),
        edge(
            End::Field { id: orders.1[1], container_id: orders.0 },
            End::Field { id: report.1[1], container_id: report.0 },
        ),
        edge(
            End::Field { id: customers.1[2], container_id: customers.0 },
            End::Field { id: report.1[2], container_id: report.0 },
        ),
        edge(End::External { fqn: "s3://raw/orders".into() }, End::Container { id: orders.0 }),
    ];
    store.create_edges(edges, true, now()).await.expect("seed edges");
}

/// `marquez_node_id`: the `nodeId` parameter of Marquez's `/api/v1/lineage` and
/// `/api/v1/column-lineage` (`service::marquez::NodeId::parse`), on any text. An id that parses
/// is written back in Marquez's form and must parse again to the same node (the graph's ids are
/// made by the same functions, so a client can send any id it was given back). An id that does
/// not parse is refused as bad input, with a message naming the forms a node id takes.
///
/// The outcome: the node parsed (`{"dataset"|"field"|"job": {namespace, name[, field]}}`), or
/// `{"refused": <code>}`; bytes that are not UTF-8 never reach the parser (`{"not_utf8": true}`).
pub fn marquez_node_id(data: &[u8]) -> Value {
    use tributary::service::marquez::{node_id_of_dataset, node_id_of_field, node_id_of_job, NodeId};
    let Ok(text) = std::str::from_utf8(data) else { return json!({"not_utf8": true}) };
    let node = match NodeId::parse(text) {
        Ok(node) => node,
        Err(e) => {
            let (code, message) = (e.code(), e.message());
            assert_eq!(code, "BAD_USER_INPUT", "a node id refused as something else than bad input: {message}");
            assert!(message.contains("nodeId must be"), "a refusal that does not say what a node id is: {message}");
            return json!({ "refused": code });
        }
    };
    let written = match &node {
        NodeId::Dataset(d) => node_id_of_dataset(d),
        NodeId::Field(d, f) => node_id_of_field(d, f),
        NodeId::Job { namespace, name } => node_id_of_job(namespace, name),
    };
    assert_eq!(written, text, "a parsed node id is written back differently");
    assert_eq!(NodeId::parse(&written).ok().as_ref(), Some(&node), "a written node id parses differently");
    match node {
        NodeId::Dataset(d) => json!({"dataset": {"namespace": d.namespace, "name": d.name}}),
        NodeId::Field(d, f) => json!({"field": {"namespace": d.namespace, "name": d.name, "field": f}}),
        NodeId::Job { namespace, name } => json!({"job": {"namespace": namespace, "name": name}}),
    }
}
