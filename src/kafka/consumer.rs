//! The consumer loop: read a batch of messages, store and apply its events through
//! `Lineage::ingest_kafka_batch`, then commit each partition's offset past the batch. Nothing is
//! committed before the store has the events; a batch the store could not take is kept and
//! tried again, with the partitions paused, until it goes through or the process stops.
//!
//! Rebalances happen only while the loop waits for messages (librdkafka runs its callbacks
//! inside `recv`), never while a batch is being stored, and a batch commits only the partitions
//! still assigned: a partition that moved to another replica is read there from its last
//! commit, and what both stored is recognised as one event.

use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance, StreamConsumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{Header, Message, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::statistics::Statistics;
use rdkafka::{Offset, TopicPartitionList};
use tokio::sync::watch;

use super::{set_state, update, KafkaConfig, State, Status};
use crate::metrics::metrics;
use crate::service::kafka::{KafkaBatchReport, KafkaMessage};
use crate::service::Lineage;

/// The client's callbacks: statistics (per-partition lag), errors, rebalances.
struct Callbacks;

impl ClientContext for Callbacks {
    fn stats(&self, stats: Statistics) {
        let gauge = &metrics().kafka_lag;
        let mut total = 0;
        for (topic, t) in &stats.topics {
            for (partition, p) in &t.partitions {
                // -1 is librdkafka's internal "unassigned" partition; others not desired are
                // not this replica's.
                if *partition < 0 || !p.desired {
                    continue;
                }
                // Behind the high watermark from the committed offset; before the first commit,
                // from the position read so far (or the start of the log).
                let lag = if p.consumer_lag >= 0 {
                    p.consumer_lag
                } else if p.app_offset >= 0 {
                    (p.hi_offset - p.app_offset).max(0)
                } else {
                    (p.hi_offset - p.lo_offset).max(0)
                };
                gauge.with_label_values(&[topic.as_str(), &partition.to_string()]).set(lag);
                total += lag;
            }
        }
        update(|s| s.lag = total);
    }

    fn error(&self, error: KafkaError, reason: &str) {
        tracing::warn!(error = %error, reason, "Kafka client error");
        update(|s| s.last_error = Some(format!("{error}: {reason}")));
    }
}

impl ConsumerContext for Callbacks {
    fn post_rebalance(&self, _consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        let names = |tpl: &TopicPartitionList| -> Vec<(String, i32)> {
            tpl.elements().iter().map(|e| (e.topic().to_string(), e.partition())).collect()
        };
        match rebalance {
            Rebalance::Assign(tpl) => {
                let added = names(tpl);
                tracing::info!(partitions = ?added, "Kafka partitions assigned");
                update(|s| {
                    for (t, p) in &added {
                        let name = format!("{t}/{p}");
                        if !s.partitions.contains(&name) {
                            s.partitions.push(name);
                        }
                    }
                    s.partitions.sort();
                });
            }
            Rebalance::Revoke(tpl) => {
                let removed = names(tpl);
                tracing::info!(partitions = ?removed, "Kafka partitions revoked");
                for (t, p) in &removed {
                    let _ = metrics().kafka_lag.remove_label_values(&[t.as_str(), &p.to_string()]);
                }
                update(|s| {
                    s.partitions.retain(|n| !removed.iter().any(|(t, p)| *n == format!("{t}/{p}")));
                });
            }
            Rebalance::Error(e) => tracing::warn!(error = %e, "Kafka rebalance failed"),
        }
        let assigned = super::status().map_or(0, |s| s.partitions.len());
        metrics().kafka_partitions.set(assigned as i64);
    }
}

type KafkaConsumer = StreamConsumer<Callbacks>;

/// Creates the consumer (a wrong librdkafka property fails here, at start, naming it),
/// subscribes it and runs it on a task of its own; it stops, committing what it stored and
/// leaving the group, once `shutdown` resolves. The task ends when it has left the group.
/// Brokers that cannot be reached are no error: the consumer keeps trying, and `/readyz` and
/// the log say so.
pub fn spawn(
    lineage: Lineage,
    config: KafkaConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<tokio::task::JoinHandle<()>, String> {
    if let Ok(mut s) = super::cell().lock() {
        *s = Some(Status {
            state: State::Starting,
            group: config.group.clone(),
            topics: config.topics.clone(),
            partitions: Vec::new(),
            lag: 0,
            last_error: None,
        });
    }
    set_state(State::Starting);
    let started = start(&config).inspect_err(|e| {
        update(|s| s.last_error = Some(e.clone()));
        set_state(State::Failed);
    })?;
    let (stop, stopped) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
    });
    Ok(tokio::spawn(async move {
        let (consumer, dead_letter) = started;
        run(lineage, config, consumer, dead_letter, stopped).await;
    }))
}

type DeadLetter = Option<(String, FutureProducer)>;

/// The consumer, subscribed, and the dead-letter producer when one is configured.
fn start(config: &KafkaConfig) -> Result<(Arc<KafkaConsumer>, DeadLetter), String> {
    let consumer: Arc<KafkaConsumer> = Arc::new(
        client_config(&config.properties)
            .create_with_context(Callbacks)
            .map_err(|e| format!("cannot create the Kafka consumer: {e}"))?,
    );
    let topics: Vec<&str> = config.topics.iter().map(String::as_str).collect();
    consumer.subscribe(&topics).map_err(|e| format!("cannot subscribe to Kafka topics {topics:?}: {e}"))?;
    let dead_letter = match &config.dead_letter_topic {
        Some(topic) => {
            let producer: FutureProducer = client_config(&super::config::producer_properties(config))
                .create()
                .map_err(|e| format!("cannot create the Kafka dead-letter producer: {e}"))?;
            Some((topic.clone(), producer))
        }
        None => None,
    };
    Ok((consumer, dead_letter))
}

fn client_config(properties: &[(String, String)]) -> ClientConfig {
    let mut c = ClientConfig::new();
    for (k, v) in properties {
        c.set(k, v);
    }
    c
}

async fn run(
    lineage: Lineage,
    config: KafkaConfig,
    consumer: Arc<KafkaConsumer>,
    dead_letter: DeadLetter,
    mut stop: watch::Receiver<bool>,
) {
    tracing::info!(brokers = %config.brokers, group = %config.group, topics = ?config.topics, "reading OpenLineage events from Kafka");
    set_state(State::Consuming);
    loop {
        let batch = read_batch(&consumer, &config, &mut stop).await;
        if !batch.is_empty() {
            let started = Instant::now();
            let Some(report) = store_batch(&lineage, &consumer, &batch, &config, &mut stop).await else {
                // Stopped while the store was down: the batch is not stored, nothing is
                // committed, and the group's next reader reads it again.
                break;
            };
            dead_letter_copy(dead_letter.as_ref(), &batch, &report).await;
            commit(&consumer, &batch).await;
            account(&batch, &report, started.elapsed());
        }
        if *stop.borrow() {
            break;
        }
    }
    set_state(State::Stopping);
    tracing::info!("leaving the Kafka consumer group");
    // Closing the consumer leaves the group at once, so its partitions move to the other
    // replicas without waiting for the session to time out. librdkafka's close blocks.
    let _ = tokio::task::spawn_blocking(move || drop(consumer)).await;
    set_state(State::Stopped);
    tracing::info!("left the Kafka consumer group");
}

/// Waits for a first message (or the stop), then takes more for up to the batch wait or the
/// batch size. Empty when stopping before any message came.
async fn read_batch(
    consumer: &KafkaConsumer,
    config: &KafkaConfig,
    stop: &mut watch::Receiver<bool>,
) -> Vec<KafkaMessage> {
    let mut batch = Vec::new();
    let mut deadline: Option<tokio::time::Instant> = None;
    while batch.len() < config.batch_size && !*stop.borrow() {
        let until = deadline;
        let wait_more = async move {
            match until {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            biased;
            _ = stop.changed() => break,
            () = wait_more => break,
            m = consumer.recv() => match m {
                Ok(m) => {
                    batch.push(KafkaMessage {
                        topic: m.topic().to_string(),
                        partition: m.partition(),
                        offset: m.offset(),
                        key: m.key().map(<[u8]>::to_vec),
                        payload: m.payload().map(<[u8]>::to_vec),
                    });
                    if deadline.is_none() {
                        deadline = Some(tokio::time::Instant::now() + config.batch_wait);
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "reading from Kafka failed");
                    update(|s| s.last_error = Some(e.to_string()));
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    }
    batch
}

/// Stores the batch, trying again while the store cannot take it, with the assigned
/// partitions paused meanwhile. `None` when the stop came first.
async fn store_batch(
    lineage: &Lineage,
    consumer: &KafkaConsumer,
    batch: &[KafkaMessage],
    config: &KafkaConfig,
    stop: &mut watch::Receiver<bool>,
) -> Option<KafkaBatchReport> {
    let mut paused: Option<TopicPartitionList> = None;
    let mut wait = Duration::from_millis(250);
    loop {
        match lineage.ingest_kafka_batch(batch, config.max_message_bytes).await {
            Ok(report) => {
                if let Some(tpl) = paused {
                    if let Err(e) = consumer.resume(&tpl) {
                        tracing::warn!(error = %e, "resuming the Kafka partitions failed");
                    }
                    tracing::info!("the store is back; Kafka partitions resumed");
                    set_state(State::Consuming);
                }
                update(|s| s.last_error = None);
                return Some(report);
            }
            Err(e) => {
                if paused.is_none() {
                    tracing::warn!(
                        error = e.message(),
                        messages = batch.len(),
                        "the store cannot take a batch of Kafka messages; pausing the partitions, committing nothing, until it is back"
                    );
                    let tpl = consumer.assignment().unwrap_or_default();
                    if let Err(e) = consumer.pause(&tpl) {
                        tracing::warn!(error = %e, "pausing the Kafka partitions failed");
                    }
                    paused = Some(tpl);
                    metrics().kafka_pauses.inc();
                    set_state(State::Paused);
                }
                update(|s| s.last_error = Some(format!("store: {}", e.message())));
                // Waits, checking the store's readiness (cheaper than a batch), until it answers.
                loop {
                    tokio::select! {
                        _ = stop.changed() => {}
                        () = tokio::time::sleep(wait) => {}
                    }
                    if *stop.borrow() {
                        tracing::warn!(messages = batch.len(), "stopping while the store is unavailable: the batch is not committed and will be read again");
                        return None;
                    }
                    wait = (wait * 2).min(Duration::from_secs(5));
                    if lineage.ping().await.is_ok() {
                        break;
                    }
                }
            }
        }
    }
}

/// Commits, for each partition of the batch this replica still holds, the offset after its
/// last message. One whose commit fails is read again later (and recognised).
async fn commit(consumer: &Arc<KafkaConsumer>, batch: &[KafkaMessage]) {
    let mut next: BTreeMap<(&str, i32), i64> = BTreeMap::new();
    for m in batch {
        let e = next.entry((m.topic.as_str(), m.partition)).or_insert(m.offset + 1);
        *e = (*e).max(m.offset + 1);
    }
    let assigned: HashSet<(String, i32)> = consumer
        .assignment()
        .map(|tpl| tpl.elements().iter().map(|e| (e.topic().to_string(), e.partition())).collect())
        .unwrap_or_default();
    let mut tpl = TopicPartitionList::new();
    for ((topic, partition), offset) in next {
        if !assigned.contains(&(topic.to_string(), partition)) {
            tracing::info!(
                topic,
                partition,
                offset,
                "partition moved to another replica before its commit; it reads the messages again there"
            );
            continue;
        }
        if let Err(e) = tpl.add_partition_offset(topic, partition, Offset::Offset(offset)) {
            tracing::warn!(error = %e, topic, partition, "cannot name an offset to commit");
        }
    }
    if tpl.count() == 0 {
        return;
    }
    let c = consumer.clone();
    let result = tokio::task::spawn_blocking(move || c.commit(&tpl, CommitMode::Sync)).await;
    match result {
        Ok(Ok(())) => metrics().kafka_commits.with_label_values(&["committed"]).inc(),
        Ok(Err(e)) => {
            metrics().kafka_commits.with_label_values(&["failed"]).inc();
            tracing::warn!(error = %e, "committing Kafka offsets failed; the stored messages will be read again and recognised");
        }
        Err(e) => tracing::error!(error = %e, "the commit task stopped"),
    }
}

/// Copies the batch's rejected messages to the dead-letter topic, with headers saying where
/// they came from and why; waits for the broker's acknowledgement (before the commit), so a
/// copy is lost only if the broker refuses it (logged and counted).
async fn dead_letter_copy(
    dead_letter: Option<&(String, FutureProducer)>,
    batch: &[KafkaMessage],
    report: &KafkaBatchReport,
) {
    let Some((topic, producer)) = dead_letter else { return };
    let mut seen = HashSet::new();
    for r in &report.rejected {
        // A list message with several bad events is copied once.
        if !seen.insert(r.index) {
            continue;
        }
        let m = &batch[r.index];
        let (partition, offset) = (m.partition.to_string(), m.offset.to_string());
        let headers = OwnedHeaders::new()
            .insert(Header { key: "tributary.source.topic", value: Some(m.topic.as_str()) })
            .insert(Header { key: "tributary.source.partition", value: Some(partition.as_str()) })
            .insert(Header { key: "tributary.source.offset", value: Some(offset.as_str()) })
            .insert(Header { key: "tributary.error", value: Some(r.reason.as_str()) });
        let mut record: FutureRecord<'_, [u8], [u8]> = FutureRecord::to(topic).headers(headers);
        if let Some(k) = m.key.as_deref() {
            record = record.key(k);
        }
        if let Some(p) = m.payload.as_deref() {
            record = record.payload(p);
        }
        match producer.send(record, Duration::from_secs(30)).await {
            Ok(_) => metrics().kafka_dead_lettered.with_label_values(&["sent"]).inc(),
            Err((e, _)) => {
                metrics().kafka_dead_lettered.with_label_values(&["failed"]).inc();
                tracing::warn!(error = %e, topic = %m.topic, partition = m.partition, offset = m.offset, "copying a rejected message to the dead-letter topic failed");
            }
        }
    }
}

fn account(batch: &[KafkaMessage], report: &KafkaBatchReport, took: Duration) {
    let m = metrics();
    for msg in batch {
        m.kafka_messages.with_label_values(&[msg.topic.as_str()]).inc();
    }
    for e in &report.ingest.events {
        m.kafka_events.with_label_values(&[e.status]).inc();
    }
    for r in &report.rejected {
        m.kafka_events.with_label_values(&["rejected"]).inc();
        let msg = &batch[r.index];
        tracing::warn!(
            topic = %msg.topic,
            partition = msg.partition,
            offset = msg.offset,
            reason = %r.reason,
            duplicate = r.duplicate,
            "Kafka message rejected; stored as rejected and skipped"
        );
    }
    m.kafka_batch_seconds.observe(took.as_secs_f64());
    tracing::debug!(
        messages = batch.len(),
        events = report.ingest.events.len(),
        applied = report.ingest.count("applied"),
        rejected = report.rejected.len(),
        ms = took.as_millis() as u64,
        "Kafka batch stored and committed"
    );
}
