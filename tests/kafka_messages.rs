//! Hostile Kafka messages (issue 48): every OpenLineage body of the hostile corpus
//! (`tests/fixtures/hostile/*.json` whose request goes to an OpenLineage ingest route, gzip
//! ones as the compressed bytes a broken producer might write) is sent as one Kafka message,
//! between two good events, through `Lineage::ingest_kafka_batch`, the function the consumer
//! calls for a batch (the broker itself is exercised by tests/faults/kafka.rs and
//! tests/python/test_kafka.py). Each must come back without error, every message that is no
//! valid event stored as `rejected` with its topic, partition and offset, and the good events
//! around it applied: a bad message never blocks its partition. Reading the batch again (a
//! redelivery) stores and applies nothing new. Runs on the embedded store and, with
//! `NEO4J_URI`, on Neo4j.

#![allow(clippy::unwrap_used)]

#[path = "support/skip_neo4j.rs"]
mod skip_neo4j;

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use tributary::config::StoreKind;
use tributary::domain::{EventFilter, PageRequest};
use tributary::ingest::openlineage::{self as ol, Limits};
use tributary::service::kafka::KafkaMessage;
use tributary::service::Lineage;
use tributary::store::Store;

const ROUTES: [&str; 4] =
    ["/api/v1/lineage", "/api/lineage/openlineage", "/api/v1/openlineage/lineage", "/api/v1/openlineage/lineage/batch"];

/// The corpus's OpenLineage bodies: (file name, bytes).
fn hostile_bodies() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let file: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let req = &file["request"];
        if !ROUTES.contains(&req["path"].as_str().unwrap_or_default()) {
            continue;
        }
        let mut body = if let Some(j) = req.get("json") {
            serde_json::to_vec(j).unwrap()
        } else if let Some(t) = req.get("text") {
            t.as_str().unwrap().as_bytes().to_vec()
        } else if let Some(parts) = req.get("parts") {
            build_parts(parts)
        } else {
            continue;
        };
        let year_ahead =
            (chrono::Utc::now() + chrono::Duration::days(365)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        body = String::from_utf8_lossy(&body)
            .replace("__ONE_YEAR_AHEAD__", &year_ahead)
            .into_bytes()
            .into_iter()
            .collect();
        if req["gzip"].as_bool() == Some(true) {
            use std::io::Write;
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(&body).unwrap();
            body = gz.finish().unwrap();
        }
        out.push((path.file_name().unwrap().to_string_lossy().into_owned(), body));
    }
    out.sort();
    assert!(out.len() >= 15, "the corpus lost its OpenLineage bodies: {}", out.len());
    out
}

/// The corpus's `parts` (tests/fixtures/hostile/README.md).
fn build_parts(parts: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    for part in parts.as_array().unwrap() {
        let times = part["times"].as_u64().unwrap_or(1) as usize;
        if let Some(t) = part["text"].as_str() {
            out.extend_from_slice(t.as_bytes());
        } else if let Some(h) = part["hex"].as_str() {
            out.extend(h.split_whitespace().map(|b| u8::from_str_radix(b, 16).unwrap()));
        } else if let Some(r) = part["repeat"].as_str() {
            for _ in 0..times {
                out.extend_from_slice(r.as_bytes());
            }
        } else if let Some(r) = part["repeat_numbered"].as_str() {
            for n in 0..times {
                out.extend_from_slice(r.replace("{n}", &n.to_string()).as_bytes());
            }
        }
    }
    out
}

fn good(ns: &str, i: usize) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "eventType": "COMPLETE",
        "eventTime": chrono::Utc::now().to_rfc3339(),
        "producer": "https://github.com/tributary/kafka-messages-test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": uuid::Uuid::new_v4().to_string()},
        "job": {"namespace": ns, "name": format!("job_{i}")},
        "inputs": [{"namespace": ns, "name": format!("db.public.in_{i}")}],
        "outputs": [{"namespace": ns, "name": format!("db.public.out_{i}")}],
    }))
    .unwrap()
}

async fn hostile_messages(store: Arc<dyn Store>) {
    let ns = format!("postgres://kafka-messages-{}:5432", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let topic = format!("hostile-{}", uuid::Uuid::new_v4().simple());
    let bodies = hostile_bodies();
    // good, hostile, good, hostile, ..., good; plus a tombstone (no value).
    let mut messages = Vec::new();
    let mut push = |payload: Option<Vec<u8>>, key: &str| {
        let offset = messages.len() as i64;
        messages.push(KafkaMessage {
            topic: topic.clone(),
            partition: 3,
            offset,
            key: Some(key.as_bytes().to_vec()),
            payload,
        });
    };
    for (i, (name, body)) in bodies.iter().enumerate() {
        push(Some(good(&ns, i)), "good");
        push(Some(body.clone()), name);
    }
    push(None, "tombstone");
    push(Some(good(&ns, bodies.len())), "good");
    let goods = bodies.len() + 1;
    // A message limit of 1 MiB, so the 51 MiB body is over it as a 50 MiB one is over the default.
    let lineage = Lineage::new(store.clone()).with_zero_setup(true);
    let report = lineage.ingest_kafka_batch(&messages, 1024 * 1024).await.unwrap();
    let rejected_keys: Vec<String> = report
        .rejected
        .iter()
        .map(|r| String::from_utf8_lossy(messages[r.index].key.as_deref().unwrap()).into_owned())
        .collect();
    // Which bodies are no valid event, by the parser and validator HTTP uses: those must be
    // rejected (some corpus files are valid events sent without a token, or a list sent to a
    // one-event route; as Kafka messages those are events).
    let limits = Limits { max_body_bytes: 1024 * 1024, ..Limits::default() };
    let now = chrono::Utc::now();
    let mut expected_rejections = 0;
    for (name, body) in &bodies {
        let valid =
            ol::parse_body(body, &limits).is_ok_and(|p| p.events.iter().all(|e| ol::validate(e, now, &limits).is_ok()));
        if !valid {
            expected_rejections += 1;
            assert!(rejected_keys.iter().any(|k| k == name), "{name} is stored as rejected: {rejected_keys:?}");
        }
    }
    assert!(expected_rejections >= 15, "the corpus has bad bodies: {expected_rejections}");
    // Every good event around the bad ones is stored and applied.
    let good_events = store
        .list_events(
            &EventFilter { job_namespace: Some(ns.clone()), ..EventFilter::default() },
            PageRequest { page: 1, size: 1_000 },
        )
        .await
        .unwrap();
    assert_eq!(good_events.total as usize, goods);
    assert!(good_events.items.iter().all(|e| e.status == "applied"), "{:?}", good_events.items);
    assert!(rejected_keys.iter().any(|k| k == "tombstone"));
    assert!(report.rejected.iter().all(|r| !r.duplicate));
    // What `openLineageEvents(status: "rejected")` lists: each with the message's place.
    let listed = store
        .list_events(
            &EventFilter { status: Some("rejected".into()), ..EventFilter::default() },
            PageRequest { page: 1, size: 1_000 },
        )
        .await
        .unwrap();
    let mine: Vec<_> = listed.items.iter().filter(|e| e.summary["kafka"]["topic"] == topic.as_str()).collect();
    assert_eq!(mine.len(), report.rejected.len(), "each rejected message is listed once");
    for e in &mine {
        let offset = e.summary["kafka"]["offset"].as_i64().unwrap();
        assert_eq!(e.summary["kafka"]["partition"], 3);
        assert_ne!(messages[offset as usize].key.as_deref(), Some(&b"good"[..]), "{e:?}");
        assert_eq!(e.submitted_by.as_deref(), Some("kafka"));
        assert!(e.errors.as_array().is_some_and(|a| !a.is_empty()), "{e:?}");
    }
    let too_large = mine.iter().find(|e| {
        messages[e.summary["kafka"]["offset"].as_i64().unwrap() as usize].key.as_deref()
            == Some(&b"openlineage-body-51mib.json"[..])
    });
    if let Some(e) = too_large {
        assert!(e.errors[0]["message"].as_str().unwrap().contains("at most 1048576 bytes"), "{e:?}");
        assert!(e.body.as_str().unwrap().len() < 70_000, "a huge message is not kept whole");
    }

    // Read again, as after a crash before the commit: nothing new is stored or applied.
    let again = lineage.ingest_kafka_batch(&messages, 1024 * 1024).await.unwrap();
    assert!(again.rejected.iter().all(|r| r.duplicate), "{:?}", again.rejected);
    assert_eq!(again.ingest.events.iter().filter(|e| e.status == "applied").count(), 0);
    assert!(again.ingest.events.iter().all(|e| e.status == "ignored" && e.summary["ignored_reason"] == "duplicate"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_kafka_messages_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let store =
        tributary::server::open_store(&StoreKind::Embedded { data_dir: dir.path().join("data") }).await.unwrap();
    hostile_messages(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_kafka_messages_neo4j() {
    let Some(uri) = skip_neo4j::neo4j_uri_or_skip() else { return };
    let kind = StoreKind::Neo4j {
        uri,
        user: std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into()),
        password: std::env::var("NEO4J_PASSWORD").unwrap_or_default(),
        database: std::env::var("NEO4J_DATABASE").ok().filter(|d| !d.is_empty()),
    };
    hostile_messages(tributary::server::open_store(&kind).await.unwrap()).await;
}
