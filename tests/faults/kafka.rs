//! The Kafka intake under faults (issue 48), against a real Apache Kafka broker
//! (scripts/kafka-start, `KAFKA_BOOTSTRAP_SERVERS`): 2,000 events on a 4-partition topic, each
//! drawing one edge of its own (`harness::event`).
//!
//! - A replica `kill -9`'d mid-stream: on Neo4j two replicas share the group and the survivor
//!   takes the dead one's partitions; on the embedded store (one `serve` per store) the replica
//!   is started again. Either way every event is applied exactly once: the graph, the evidence
//!   and the event log are what a clean HTTP ingest of the same events gives (checked against
//!   one, in a namespace of its own, in the same store). Then SIGTERM: the replica commits and
//!   leaves the group, and a new member finds nothing left to read.
//! - Neo4j stopped and restarted mid-stream (a Neo4j of the test's own): the consumer pauses,
//!   commits nothing while it is down, resumes, and loses nothing.
//!
//! The kill lands while the killed replica holds partitions with messages still to read (half
//! the events are written only after it has applied some), so "mid-stream" is made certain;
//! every wait polls its condition with a generous bound, and nothing asserts a duration.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::producer::{FutureProducer, FutureRecord};
use serde_json::Value;

use super::harness::{acknowledged_in_graph, event, namespace, stored_events, Serve, StoreAt};
use super::soak::OwnNeo4j;
use super::SERIAL;

const EVENTS: usize = 2_000;

fn bootstrap() -> String {
    let servers = std::env::var("KAFKA_BOOTSTRAP_SERVERS").unwrap_or_default();
    assert!(
        !servers.is_empty(),
        "KAFKA_BOOTSTRAP_SERVERS is not set: the Kafka fault cases need a real broker (scripts/test starts one with scripts/kafka-start)"
    );
    servers
}

async fn create_topic(name: &str, partitions: i32) {
    let admin: AdminClient<DefaultClientContext> =
        ClientConfig::new().set("bootstrap.servers", bootstrap()).create().expect("an admin client");
    let topic = NewTopic::new(name, partitions, TopicReplication::Fixed(1));
    let results = admin.create_topics([&topic], &AdminOptions::new()).await.expect("create_topics answers");
    for r in results {
        r.expect("the topic is created");
    }
}

/// Writes events `range` of `ns` (keyed by run id, so they spread over the partitions), each
/// acknowledged by the broker; their run ids.
async fn produce(topic: &str, ns: &str, range: std::ops::Range<usize>) -> Vec<String> {
    let producer: FutureProducer =
        ClientConfig::new().set("bootstrap.servers", bootstrap()).set("linger.ms", "5").create().expect("a producer");
    let mut runs = Vec::new();
    let mut sends = Vec::new();
    for i in range {
        let run = uuid::Uuid::new_v4().to_string();
        let body = serde_json::to_vec(&event(ns, i, &run)).unwrap();
        let p = producer.clone();
        let (topic, key) = (topic.to_string(), run.clone());
        sends.push(tokio::spawn(async move {
            p.send(FutureRecord::to(&topic).key(&key).payload(&body), Duration::from_secs(60))
                .await
                .map_err(|(e, _)| e)
                .expect("the broker acknowledges the event");
        }));
        runs.push(run);
    }
    for s in sends {
        s.await.unwrap();
    }
    runs
}

fn kafka_flags(topic: &str, group: &str) -> Vec<String> {
    [
        "--kafka-brokers",
        &bootstrap(),
        "--kafka-topic",
        topic,
        "--kafka-group",
        group,
        // The broker's smallest: a killed replica's partitions move after about 6 s.
        "--kafka-session-timeout-ms",
        "6000",
        "--kafka-batch-size",
        "100",
        "--kafka-stats-interval-ms",
        "500",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

async fn start(store: &StoreAt, log: &std::path::Path, flags: &[String]) -> Serve {
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    Serve::start(store, log, &flags).await
}

async fn readyz(serve: &Serve) -> String {
    match reqwest::get(format!("{}/readyz", serve.url)).await {
        Ok(r) => r.text().await.unwrap_or_default(),
        Err(e) => e.to_string(),
    }
}

/// Waits (bounded) until `check` holds, failing with `what` and the logs of `serves`.
async fn until<F, Fut>(what: &str, within: Duration, serves: &[&Serve], mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while !check().await {
        if started.elapsed() > within {
            let logs: Vec<String> = serves.iter().map(|s| s.log_text()).collect();
            let tail: Vec<String> =
                logs.iter().map(|l| l.lines().rev().take(40).collect::<Vec<_>>().join("\n")).collect();
            panic!("not within {within:?}: {what}\nlogs (newest lines first):\n{}", tail.join("\n-----\n"));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Every one of `n` events of `ns` stored, none pending. Counted by distinct run id: the log is
/// read a page at a time, newest first, so events stored between two pages shift the second
/// page and some events are read twice (and the newest, still pending, not at all).
async fn all_stored(url: &str, ns: &str, n: usize) -> bool {
    let events = stored_events(url, ns).await;
    let distinct: HashSet<&String> = events.values().flatten().collect();
    distinct.len() == n && events.get("pending").is_none_or(|p| p.is_empty())
}

/// The same events posted over HTTP in a namespace of their own (and runs of their own, a run
/// being one job's): the clean ingest to compare with. Their run ids.
async fn http_ingest(url: &str, ns: &str, n: usize) -> Vec<String> {
    let client = reqwest::Client::new();
    let runs: Vec<String> = (0..n).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    for (c, chunk) in runs.chunks(500).enumerate() {
        let events: Vec<Value> = chunk.iter().enumerate().map(|(k, run)| event(ns, c * 500 + k, run)).collect();
        let r = client.post(format!("{url}/api/v1/lineage")).json(&events).send().await.expect("ingest answers");
        assert!(r.status().is_success(), "HTTP ingest answered {}: {:?}", r.status(), r.text().await);
    }
    runs
}

async fn a_replica_killed_mid_stream_loses_and_repeats_nothing(store: StoreAt, tag: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let ns = namespace(tag);
    let suffix = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let (topic, group) = (format!("faults-{tag}-{suffix}"), format!("faults-{tag}-{suffix}"));
    create_topic(&topic, 4).await;
    let flags = kafka_flags(&topic, &group);
    let replicas = matches!(store, StoreAt::Neo4j(_));
    let mut a = start(&store, &tmp.path().join("a.log"), &flags).await;
    let b = if replicas { Some(start(&store, &tmp.path().join("b.log"), &flags).await) } else { None };
    if let Some(b) = &b {
        // Both members hold partitions before anything is written, so the kill takes some away.
        until("both replicas hold two partitions", Duration::from_secs(120), &[&a, b], || async {
            readyz(&a).await.contains("2 partition(s) assigned") && readyz(b).await.contains("2 partition(s) assigned")
        })
        .await;
    }
    let mut runs = produce(&topic, &ns, 0..EVENTS / 2).await;
    until("the first replica applied events", Duration::from_secs(180), &[&a], || async {
        a.metric("tributary_kafka_events_total").await >= 100.0
    })
    .await;
    a.kill9();
    eprintln!("{tag}: replica killed after it read some of the first {} events", EVENTS / 2);
    runs.extend(produce(&topic, &ns, EVENTS / 2..EVENTS).await);
    let survivor = match b {
        Some(b) => b,
        // One serve per embedded store: the same replica again, which reads from the last commit.
        None => start(&store, &tmp.path().join("a.log"), &flags).await,
    };
    until("every event stored and applied", Duration::from_secs(420), &[&survivor], || {
        all_stored(&survivor.url, &ns, EVENTS)
    })
    .await;
    let all: HashSet<String> = runs.iter().cloned().collect();
    assert_eq!(all.len(), EVENTS);
    // Graph, evidence and event log: each event stored once, applied, one edge with one
    // piece of evidence naming its run, nothing else.
    assert_eq!(acknowledged_in_graph(&survivor.url, &ns, &all).await, EVENTS);
    // A clean HTTP ingest of the same events gives the same.
    let http_ns = namespace(&format!("{tag}-http"));
    let http_runs: HashSet<String> = http_ingest(&survivor.url, &http_ns, EVENTS).await.into_iter().collect();
    assert_eq!(acknowledged_in_graph(&survivor.url, &http_ns, &http_runs).await, EVENTS);
    let outcomes = |m: std::collections::BTreeMap<String, Vec<String>>| {
        m.into_iter().map(|(status, runs)| (status, runs.len())).collect::<Vec<_>>()
    };
    assert_eq!(
        outcomes(stored_events(&survivor.url, &ns).await),
        outcomes(stored_events(&survivor.url, &http_ns).await),
        "the event logs hold as many events with the same outcomes"
    );

    // SIGTERM: the survivor commits what it stored and leaves the group at once.
    let mut survivor = survivor;
    survivor.terminate();
    let status = survivor.exited_within(Duration::from_secs(60)).await.expect("serve exits after SIGTERM");
    assert!(status.success(), "serve exits cleanly: {status}");
    let log = survivor.log_text();
    assert!(log.contains("left the Kafka consumer group"), "{log}");
    // A new member of the group finds every partition committed to its end: nothing to read.
    let fresh = start(&store, &tmp.path().join("c.log"), &flags).await;
    until("the new member holds the four partitions with no lag", Duration::from_secs(120), &[&fresh], || async {
        let ready = readyz(&fresh).await;
        let text = reqwest::get(format!("{}/metrics", fresh.url)).await.unwrap().text().await.unwrap();
        let lags: Vec<&str> = text.lines().filter(|l| l.starts_with("tributary_kafka_consumer_lag{")).collect();
        ready.contains("4 partition(s) assigned") && lags.len() == 4 && lags.iter().all(|l| l.ends_with(" 0"))
    })
    .await;
    assert_eq!(fresh.metric("tributary_kafka_messages_consumed_total").await, 0.0);
}

async fn neo4j_restarted_mid_stream_loses_nothing(tag: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let neo = OwnNeo4j::start(tmp.path().join("neo4j"));
    let store = StoreAt::Neo4j(format!("bolt://127.0.0.1:{}", neo.port));
    let ns = namespace(tag);
    let suffix = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let (topic, group) = (format!("faults-{tag}-{suffix}"), format!("faults-{tag}-{suffix}"));
    create_topic(&topic, 4).await;
    let serve = start(&store, &tmp.path().join("serve.log"), &kafka_flags(&topic, &group)).await;
    let mut runs = produce(&topic, &ns, 0..EVENTS / 2).await;
    until("some events applied", Duration::from_secs(180), &[&serve], || async {
        serve.metric("tributary_kafka_events_total").await >= 100.0
    })
    .await;
    neo.stop(true);
    runs.extend(produce(&topic, &ns, EVENTS / 2..EVENTS).await);
    // With the store gone the consumer pauses and says so.
    until("the consumer paused", Duration::from_secs(120), &[&serve], || async {
        readyz(&serve).await.contains("kafka: paused")
    })
    .await;
    assert!(serve.metric("tributary_kafka_pauses_total").await >= 1.0);
    neo.start_again();
    until("every event stored and applied", Duration::from_secs(420), &[&serve], || {
        all_stored(&serve.url, &ns, EVENTS)
    })
    .await;
    assert!(readyz(&serve).await.contains("kafka: consuming"));
    let all: HashSet<String> = runs.into_iter().collect();
    assert_eq!(acknowledged_in_graph(&serve.url, &ns, &all).await, EVENTS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_replica_killed_mid_stream_embedded() {
    let _one = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    a_replica_killed_mid_stream_loses_and_repeats_nothing(
        StoreAt::Embedded(dir.path().join("data")),
        "kafka-kill-embedded",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_replica_killed_mid_stream_neo4j() {
    let _one = SERIAL.lock().await;
    a_replica_killed_mid_stream_loses_and_repeats_nothing(StoreAt::neo4j(), "kafka-kill-neo4j").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_neo4j_restarted_mid_stream_neo4j() {
    let _one = SERIAL.lock().await;
    neo4j_restarted_mid_stream_loses_nothing("kafka-neo4j-restart").await;
}
