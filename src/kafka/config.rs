//! The Kafka intake's flags (`serve --kafka-*`, env `TRIBUTARY_KAFKA_*`) and what they become:
//! a checked `KafkaConfig` and the librdkafka properties of the consumer. Security settings
//! keep librdkafka's names (`security.protocol`, `sasl.*`, `ssl.*`) and go through unchanged,
//! so a deployment's existing client configuration carries over; `--kafka-option` passes any
//! other property.

use std::time::Duration;

use clap::Args;

/// `serve`'s Kafka flags. No brokers: no consumer.
#[derive(Debug, Clone, Args, Default)]
pub struct KafkaArgs {
    /// Kafka bootstrap servers (HOST:PORT, comma-separated): consume OpenLineage events from
    /// `--kafka-topic`. Without it `serve` reads no topic.
    #[arg(long, env = "TRIBUTARY_KAFKA_BROKERS")]
    pub kafka_brokers: Option<String>,
    /// Topics to consume (repeat, or comma-separated), each message one OpenLineage event or a
    /// JSON list of events (as openlineage-python's and Spark's KafkaTransport write them).
    #[arg(long, env = "TRIBUTARY_KAFKA_TOPIC", value_delimiter = ',')]
    pub kafka_topic: Vec<String>,
    /// Consumer group: replicas in one group share the topics' partitions.
    #[arg(long, env = "TRIBUTARY_KAFKA_GROUP", default_value = "tributary")]
    pub kafka_group: String,
    /// client.id the brokers see.
    #[arg(long, env = "TRIBUTARY_KAFKA_CLIENT_ID", default_value = "tributary")]
    pub kafka_client_id: String,
    /// Where a group with no committed offset starts: `earliest` (every event the topic
    /// holds) or `latest` (only events written from now on).
    #[arg(long, env = "TRIBUTARY_KAFKA_AUTO_OFFSET_RESET", default_value = "earliest",
          value_parser = ["earliest", "latest"])]
    pub kafka_auto_offset_reset: String,
    /// librdkafka's `security.protocol`: plaintext, ssl, sasl_plaintext or sasl_ssl.
    #[arg(long, env = "TRIBUTARY_KAFKA_SECURITY_PROTOCOL")]
    pub kafka_security_protocol: Option<String>,
    /// librdkafka's `sasl.mechanism`: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER.
    #[arg(long, env = "TRIBUTARY_KAFKA_SASL_MECHANISM")]
    pub kafka_sasl_mechanism: Option<String>,
    /// librdkafka's `sasl.username`.
    #[arg(long, env = "TRIBUTARY_KAFKA_SASL_USERNAME")]
    pub kafka_sasl_username: Option<String>,
    /// librdkafka's `sasl.password`.
    #[arg(long, env = "TRIBUTARY_KAFKA_SASL_PASSWORD", hide_env_values = true)]
    pub kafka_sasl_password: Option<String>,
    /// librdkafka's `ssl.ca.location`: the CA certificate(s) that sign the brokers' certificates.
    #[arg(long, env = "TRIBUTARY_KAFKA_SSL_CA_LOCATION")]
    pub kafka_ssl_ca_location: Option<String>,
    /// librdkafka's `ssl.certificate.location`: this client's certificate (mutual TLS).
    #[arg(long, env = "TRIBUTARY_KAFKA_SSL_CERTIFICATE_LOCATION")]
    pub kafka_ssl_certificate_location: Option<String>,
    /// librdkafka's `ssl.key.location`: this client's private key (mutual TLS).
    #[arg(long, env = "TRIBUTARY_KAFKA_SSL_KEY_LOCATION")]
    pub kafka_ssl_key_location: Option<String>,
    /// librdkafka's `ssl.key.password`.
    #[arg(long, env = "TRIBUTARY_KAFKA_SSL_KEY_PASSWORD", hide_env_values = true)]
    pub kafka_ssl_key_password: Option<String>,
    /// Any other librdkafka consumer property, as KEY=VALUE (repeat, or comma-separated in
    /// the variable), for example `fetch.max.bytes=10485760`. Applied last, so it wins.
    #[arg(long = "kafka-option", env = "TRIBUTARY_KAFKA_OPTIONS", value_delimiter = ',')]
    pub kafka_options: Vec<String>,
    /// librdkafka's `session.timeout.ms`: how long the group waits for a replica that stopped
    /// answering (a `kill -9`) before its partitions move to the others.
    #[arg(long, env = "TRIBUTARY_KAFKA_SESSION_TIMEOUT_MS", default_value_t = 45_000)]
    pub kafka_session_timeout_ms: u32,
    /// librdkafka's `max.poll.interval.ms`: longest time between two reads before the group
    /// counts this replica gone (a store outage longer than this hands the partitions over;
    /// nothing is lost, their uncommitted messages are read again).
    #[arg(long, env = "TRIBUTARY_KAFKA_MAX_POLL_INTERVAL_MS", default_value_t = 300_000)]
    pub kafka_max_poll_interval_ms: u32,
    /// Messages read into one batch at most; a batch's events go through one ingest call (as
    /// a request's do), then its offsets are committed.
    #[arg(long, env = "TRIBUTARY_KAFKA_BATCH_SIZE", default_value_t = 500,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub kafka_batch_size: u32,
    /// How long (milliseconds) a batch waits for more messages once it has one.
    #[arg(long, env = "TRIBUTARY_KAFKA_BATCH_WAIT_MS", default_value_t = 100,
          value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub kafka_batch_wait_ms: u64,
    /// Largest message taken (bytes); a larger one is stored as rejected. Default: the HTTP
    /// ingest's body limit, 50 MiB.
    #[arg(long, env = "TRIBUTARY_KAFKA_MAX_MESSAGE_BYTES", default_value_t = crate::api::openlineage::INGEST_BODY_LIMIT)]
    pub kafka_max_message_bytes: usize,
    /// Also copy every rejected message (not JSON, not OpenLineage, too large) to this topic,
    /// with headers naming where it came from and why it was rejected.
    #[arg(long, env = "TRIBUTARY_KAFKA_DEAD_LETTER_TOPIC")]
    pub kafka_dead_letter_topic: Option<String>,
    /// How often (milliseconds) the consumer's per-partition lag is refreshed for /metrics.
    #[arg(long, env = "TRIBUTARY_KAFKA_STATS_INTERVAL_MS", default_value_t = 5_000,
          value_parser = clap::value_parser!(u64).range(100..=3_600_000))]
    pub kafka_stats_interval_ms: u64,
}

/// The Kafka intake's configuration, checked.
#[derive(Debug, Clone)]
pub struct KafkaConfig {
    pub brokers: String,
    pub topics: Vec<String>,
    pub group: String,
    pub batch_size: usize,
    pub batch_wait: Duration,
    pub max_message_bytes: usize,
    pub dead_letter_topic: Option<String>,
    /// librdkafka properties of the consumer, in the order they are set.
    pub properties: Vec<(String, String)>,
}

impl KafkaArgs {
    /// `None` when no brokers are named; an error naming the flag when the flags disagree.
    pub fn config(&self) -> Result<Option<KafkaConfig>, String> {
        let brokers = self.kafka_brokers.as_deref().map(str::trim).filter(|b| !b.is_empty());
        let topics: Vec<String> =
            self.kafka_topic.iter().map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect();
        let Some(brokers) = brokers else {
            if !topics.is_empty() {
                return Err("--kafka-topic (TRIBUTARY_KAFKA_TOPIC) is set without --kafka-brokers \
                            (TRIBUTARY_KAFKA_BROKERS): name the brokers to read the topic from"
                    .into());
            }
            return Ok(None);
        };
        if topics.is_empty() {
            return Err("--kafka-brokers (TRIBUTARY_KAFKA_BROKERS) is set without --kafka-topic \
                        (TRIBUTARY_KAFKA_TOPIC): name the topic(s) OpenLineage events are written to"
                .into());
        }
        let group = self.kafka_group.trim();
        if group.is_empty() {
            return Err("--kafka-group (TRIBUTARY_KAFKA_GROUP) must not be empty".into());
        }
        if self.kafka_max_message_bytes == 0 {
            return Err("--kafka-max-message-bytes must be at least 1".into());
        }
        let mut properties: Vec<(String, String)> = vec![
            ("bootstrap.servers".into(), brokers.to_string()),
            ("group.id".into(), group.to_string()),
            ("client.id".into(), self.kafka_client_id.clone()),
            // Offsets are committed by hand, per partition, once a batch's events are stored.
            ("enable.auto.commit".into(), "false".into()),
            ("enable.auto.offset.store".into(), "false".into()),
            ("auto.offset.reset".into(), self.kafka_auto_offset_reset.clone()),
            ("session.timeout.ms".into(), self.kafka_session_timeout_ms.to_string()),
            ("max.poll.interval.ms".into(), self.kafka_max_poll_interval_ms.to_string()),
            ("statistics.interval.ms".into(), self.kafka_stats_interval_ms.to_string()),
        ];
        let optional = [
            ("security.protocol", &self.kafka_security_protocol),
            ("sasl.mechanism", &self.kafka_sasl_mechanism),
            ("sasl.username", &self.kafka_sasl_username),
            ("sasl.password", &self.kafka_sasl_password),
            ("ssl.ca.location", &self.kafka_ssl_ca_location),
            ("ssl.certificate.location", &self.kafka_ssl_certificate_location),
            ("ssl.key.location", &self.kafka_ssl_key_location),
            ("ssl.key.password", &self.kafka_ssl_key_password),
        ];
        for (key, value) in optional {
            if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
                properties.push((key.into(), v.to_string()));
            }
        }
        for option in self.kafka_options.iter().map(|o| o.trim()).filter(|o| !o.is_empty()) {
            let Some((k, v)) = option.split_once('=').filter(|(k, _)| !k.trim().is_empty()) else {
                return Err(format!("--kafka-option {option:?} is not KEY=VALUE (a librdkafka property)"));
            };
            let k = k.trim();
            if matches!(k, "enable.auto.commit" | "enable.auto.offset.store") && v.trim() != "false" {
                return Err(format!(
                    "--kafka-option {k}={v}: offsets are committed only once events are stored, so {k} stays false"
                ));
            }
            properties.push((k.to_string(), v.trim().to_string()));
        }
        Ok(Some(KafkaConfig {
            brokers: brokers.to_string(),
            topics,
            group: group.to_string(),
            batch_size: self.kafka_batch_size as usize,
            batch_wait: Duration::from_millis(self.kafka_batch_wait_ms),
            max_message_bytes: self.kafka_max_message_bytes,
            dead_letter_topic: self.kafka_dead_letter_topic.clone().filter(|t| !t.trim().is_empty()),
            properties,
        }))
    }
}

/// The properties of a producer for the dead-letter topic: the consumer's connection and
/// security settings, none of its group settings.
pub fn producer_properties(config: &KafkaConfig) -> Vec<(String, String)> {
    const CONSUMER_ONLY: &[&str] = &[
        "group.id",
        "enable.auto.commit",
        "enable.auto.offset.store",
        "auto.offset.reset",
        "session.timeout.ms",
        "max.poll.interval.ms",
        "statistics.interval.ms",
    ];
    let mut p: Vec<(String, String)> =
        config.properties.iter().filter(|(k, _)| !CONSUMER_ONLY.contains(&k.as_str())).cloned().collect();
    p.push(("message.max.bytes".into(), (config.max_message_bytes.max(1_000_000) + 65_536).to_string()));
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        kafka: KafkaArgs,
    }

    fn args(a: &[&str]) -> KafkaArgs {
        Cli::try_parse_from(std::iter::once("x").chain(a.iter().copied())).expect("flags parse").kafka
    }

    #[test]
    fn off_unless_brokers_are_named() {
        assert!(args(&[]).config().expect("no error").is_none());
    }

    #[test]
    fn brokers_and_topics_need_each_other() {
        let e = args(&["--kafka-brokers", "b:9092"]).config().expect_err("no topic");
        assert!(e.contains("--kafka-topic"), "{e}");
        let e = args(&["--kafka-topic", "t"]).config().expect_err("no brokers");
        assert!(e.contains("--kafka-brokers"), "{e}");
    }

    #[test]
    fn security_settings_pass_through_under_librdkafka_names() {
        let c = args(&[
            "--kafka-brokers",
            "b:9093",
            "--kafka-topic",
            "a,b",
            "--kafka-security-protocol",
            "sasl_ssl",
            "--kafka-sasl-mechanism",
            "SCRAM-SHA-512",
            "--kafka-sasl-username",
            "u",
            "--kafka-sasl-password",
            "p",
            "--kafka-option",
            "fetch.max.bytes=1000",
        ])
        .config()
        .expect("valid")
        .expect("on");
        let get = |k: &str| c.properties.iter().rev().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        assert_eq!(c.topics, ["a", "b"]);
        assert_eq!(c.group, "tributary");
        assert_eq!(get("security.protocol"), Some("sasl_ssl"));
        assert_eq!(get("sasl.mechanism"), Some("SCRAM-SHA-512"));
        assert_eq!(get("sasl.password"), Some("p"));
        assert_eq!(get("fetch.max.bytes"), Some("1000"));
        assert_eq!(get("enable.auto.commit"), Some("false"));
        let producer = producer_properties(&c);
        assert!(producer.iter().any(|(k, v)| k == "sasl.username" && v == "u"));
        assert!(!producer.iter().any(|(k, _)| k == "group.id"));
    }

    #[test]
    fn auto_commit_cannot_be_turned_on() {
        let e = args(&["--kafka-brokers", "b", "--kafka-topic", "t", "--kafka-option", "enable.auto.commit=true"])
            .config()
            .expect_err("refused");
        assert!(e.contains("stays false"), "{e}");
        let e = args(&["--kafka-brokers", "b", "--kafka-topic", "t", "--kafka-option", "nonsense"])
            .config()
            .expect_err("refused");
        assert!(e.contains("KEY=VALUE"), "{e}");
    }
}
