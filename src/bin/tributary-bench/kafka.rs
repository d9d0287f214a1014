//! The Kafka scenario (issue #48): OpenLineage events read from a topic of a real broker by the
//! service's consumer (`tributary::kafka`, in this process, on the bench's store), against the
//! HTTP ingest of events of the same shape and number in the same run. Two sets from the
//! generator with two seeds, so neither is a duplicate of the other: the HTTP set is posted in
//! requests of 1,000, the Kafka set written to a fresh 4-partition topic first and then consumed
//! in batches of 1,000 messages. The Kafka time runs from the moment the consumer holds its
//! partitions until the last event is applied.

use std::time::{Duration, Instant};

use axum::body::Bytes;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::producer::{FutureProducer, FutureRecord};
use tributary::service::Lineage;
use tributary::store::Store;

use crate::gen::Graph;
use crate::harness::Client;
use crate::report::{say, Report};
use crate::{Args, Plan};

pub(crate) async fn kafka(
    client: &Client,
    plan: &Plan,
    args: &Args,
    g: &Graph,
    store: std::sync::Arc<dyn Store>,
    report: &mut Report,
) -> anyhow::Result<()> {
    let Some(brokers) = args.kafka_brokers.clone().filter(|b| !b.is_empty()) else {
        anyhow::bail!(
            "the kafka scenario needs a broker: --kafka-brokers or KAFKA_BOOTSTRAP_SERVERS (scripts/kafka-start)"
        );
    };
    let n = plan.ingest_events.max(1);
    // The HTTP side, in this run: requests of 1,000 events.
    let http_events = g.openlineage_events(n, args.seed ^ 0x4854_5450);
    let t = Instant::now();
    let mut http_applied = 0;
    for chunk in http_events.chunks(1_000) {
        let (_, v) =
            client.post(format!("{}/api/v1/lineage", client.service), Bytes::from(serde_json::to_vec(chunk)?)).await?;
        http_applied += v["applied"].as_i64().unwrap_or(0) + v["ignored"].as_i64().unwrap_or(0);
    }
    let http_secs = t.elapsed().as_secs_f64();

    // The Kafka side: the events written first, then read.
    let kafka_events = g.openlineage_events(n, args.seed ^ 0x4B41_464B);
    let topic = format!("tributary-bench-{}", uuid::Uuid::new_v4().simple());
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new().set("bootstrap.servers", &brokers).create()?;
    for r in admin.create_topics([&NewTopic::new(&topic, 4, TopicReplication::Fixed(1))], &AdminOptions::new()).await? {
        r.map_err(|(t, e)| anyhow::anyhow!("cannot create topic {t}: {e}"))?;
    }
    let producer: FutureProducer =
        ClientConfig::new().set("bootstrap.servers", &brokers).set("linger.ms", "5").create()?;
    let mut sends = Vec::with_capacity(n);
    for e in &kafka_events {
        let key = e["run"]["runId"].as_str().unwrap_or_default().to_string();
        let body = serde_json::to_vec(e)?;
        let p = producer.clone();
        let topic = topic.clone();
        sends.push(tokio::spawn(async move {
            p.send(FutureRecord::to(&topic).key(&key).payload(&body), Duration::from_secs(60)).await.map(|_| ())
        }));
    }
    for s in sends {
        s.await?.map_err(|(e, _)| anyhow::anyhow!("the broker refused an event: {e}"))?;
    }
    let before = events_counted();
    let config = tributary::kafka::KafkaArgs {
        kafka_brokers: Some(brokers),
        kafka_topic: vec![topic.clone()],
        kafka_group: format!("tributary-bench-{}", uuid::Uuid::new_v4().simple()),
        kafka_client_id: "tributary-bench".into(),
        kafka_auto_offset_reset: "earliest".into(),
        kafka_session_timeout_ms: 45_000,
        kafka_max_poll_interval_ms: 300_000,
        kafka_batch_size: 1_000,
        kafka_batch_wait_ms: 100,
        kafka_max_message_bytes: 50 * 1024 * 1024,
        kafka_stats_interval_ms: 5_000,
        ..Default::default()
    }
    .config()
    .map_err(|e| anyhow::anyhow!(e))?
    .ok_or_else(|| anyhow::anyhow!("no Kafka configuration"))?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let consumer = tributary::kafka::spawn(Lineage::new(store), config, async move {
        let _ = stopped.await;
    })
    .map_err(|e| anyhow::anyhow!(e))?;
    let joined = Instant::now();
    while tributary::kafka::status().is_none_or(|s| s.partitions.is_empty()) {
        anyhow::ensure!(joined.elapsed() < Duration::from_secs(120), "the consumer got no partitions in 120 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let t = Instant::now();
    while events_counted() - before < n as f64 {
        anyhow::ensure!(
            t.elapsed() < Duration::from_secs(3_600),
            "the consumer took {} of {n} events in an hour",
            events_counted() - before
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let kafka_secs = t.elapsed().as_secs_f64();
    let _ = stop.send(());
    let _ = consumer.await;
    let applied = applied_counted();
    say(&format!(
        "  (kafka: {n} events in {kafka_secs:.2} s after the group join ({:.2} s), HTTP {http_secs:.2} s)",
        t.duration_since(joined).as_secs_f64()
    ));
    report.add("kafka", "events_per_sec_vs_http", n as f64 / kafka_secs, Some(n as f64 / http_secs));
    report.add("kafka", "events_applied", applied, Some(http_applied as f64));
    Ok(())
}

/// Events the consumer has taken (any outcome) so far, from its metric.
fn events_counted() -> f64 {
    sum_of("tributary_kafka_events_total", None)
}

/// Events the consumer applied or ignored (as the HTTP report counts a success).
fn applied_counted() -> f64 {
    sum_of("tributary_kafka_events_total", Some("applied")) + sum_of("tributary_kafka_events_total", Some("ignored"))
}

fn sum_of(name: &str, status: Option<&str>) -> f64 {
    tributary::metrics::metrics()
        .registry
        .gather()
        .iter()
        .filter(|f| f.name() == name)
        .flat_map(|f| f.get_metric())
        .filter(|m| status.is_none_or(|s| m.get_label().iter().any(|l| l.name() == "status" && l.value() == s)))
        .map(|m| m.get_counter().get_value())
        .sum()
}
