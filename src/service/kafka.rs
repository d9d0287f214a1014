//! OpenLineage events read from Kafka: a batch of messages goes through the same ingest as a
//! request (`Lineage::ingest_openlineage`, the store's event log first), and a message that
//! cannot be an event (not JSON, not OpenLineage, over the size limit) is stored as `rejected`
//! with the topic, partition and offset it came from, so it never blocks its partition.
//!
//! Identity, for redelivery: an event's is its content (`ingest::openlineage::event_fingerprint`,
//! as for HTTP), so a message read again after a crash or a rebalance is recognised as the
//! duplicate of what it stored the first time and applied once; a rejected message's is its
//! topic, partition, offset and a hash of its bytes.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::openlineage::IngestReport;
use super::{Caller, Lineage};
use crate::domain::{EventOutcome, StoredEvent};
use crate::error::{Error, Result};
use crate::ingest::openlineage::{self as ol, BodyError, Limits};

/// One Kafka message, as read.
#[derive(Debug, Clone)]
pub struct KafkaMessage {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    /// `None` for a message without a value (a tombstone).
    pub payload: Option<Vec<u8>>,
}

/// A message stored as rejected: where it came from and why.
#[derive(Debug, Clone)]
pub struct RejectedMessage {
    /// Its index in the batch.
    pub index: usize,
    pub reason: String,
    /// Already stored by an earlier read of the same message.
    pub duplicate: bool,
}

/// What became of a batch of messages.
#[derive(Debug, Default)]
pub struct KafkaBatchReport {
    /// The ingest's report of the events the messages carried.
    pub ingest: IngestReport,
    pub rejected: Vec<RejectedMessage>,
}

/// The caller Kafka's events act as: Kafka carries no token, so whoever may write to the topic
/// is trusted as an unrestricted admin (as with `TRIBUTARY_AUTH=off`); `kafka` is who sent
/// them on their evidence and in the event log.
pub fn kafka_caller() -> Caller {
    Caller { user: "kafka".into(), ..Caller::system() }
}

/// The largest part of a rejected message kept as its body, so a 50 MiB message is not kept
/// whole for saying it was too large.
const KEPT_BYTES: usize = 64 * 1024;

/// A message (its index in the batch) to store as rejected: the body kept and the errors
/// (`(location, message)`).
type Rejection = (usize, Value, Vec<(String, String)>);

/// Events passed to one ingest call at most (the HTTP list limit).
const EVENTS_PER_CALL: usize = 1_000;

impl Lineage {
    /// Stores and applies the events of a batch of messages, and stores every message that is
    /// not an event as rejected. `Err` (the store is unavailable or failed) means the batch is
    /// not durably stored: none of its offsets may be committed, and reading it again is safe.
    pub async fn ingest_kafka_batch(
        &self,
        messages: &[KafkaMessage],
        max_message_bytes: usize,
    ) -> Result<KafkaBatchReport> {
        let caller = kafka_caller();
        let limits = Limits { max_body_bytes: max_message_bytes, ..Limits::default() };
        let now = crate::domain::now();
        let mut events: Vec<Value> = Vec::new();
        let mut rejected: Vec<Rejection> = Vec::new();
        for (index, m) in messages.iter().enumerate() {
            let Some(payload) = m.payload.as_deref() else {
                rejected.push((index, Value::Null, vec![(String::new(), "the message has no value".into())]));
                continue;
            };
            let parsed = ol::decode_body(payload, false, &limits).and_then(|b| ol::parse_body(&b, &limits));
            let parsed = match parsed {
                Ok(p) => p,
                Err(e) => {
                    let message = match e {
                        BodyError::TooLarge(_) => format!(
                            "the message is {} bytes; at most {max_message_bytes} bytes are accepted",
                            payload.len()
                        ),
                        BodyError::BadRequest(m) => m.replace("the body", "the message"),
                    };
                    rejected.push((index, kept_text(payload), vec![(String::new(), message)]));
                    continue;
                }
            };
            for (n, event) in parsed.events.into_iter().enumerate() {
                // Checked here so that the rejection can name the message; the ingest checks
                // the valid ones again as it applies them.
                match ol::validate(&event, now, &limits) {
                    Ok(_) => events.push(event),
                    Err(issues) => {
                        let errors = issues
                            .into_iter()
                            .map(|i| {
                                let at = if parsed.is_list { format!("/{n}{}", i.pointer) } else { i.pointer };
                                (at, i.message)
                            })
                            .collect();
                        rejected.push((index, event, errors));
                    }
                }
            }
        }
        let mut report = KafkaBatchReport::default();
        if !rejected.is_empty() {
            report.rejected = self.store_rejected(messages, rejected, now).await?;
        }
        for chunk in chunks(events, EVENTS_PER_CALL) {
            let part = self.ingest_openlineage(&caller, chunk).await?;
            let offset = report.ingest.events.len();
            report.ingest.events.extend(part.events.into_iter().map(|mut e| {
                e.index += offset;
                e
            }));
        }
        Ok(report)
    }

    /// Stores rejected messages (each with its topic, partition, offset and errors) in one
    /// transaction and records them rejected in another; one stored before is left as it is.
    async fn store_rejected(
        &self,
        messages: &[KafkaMessage],
        rejected: Vec<Rejection>,
        now: crate::domain::Timestamp,
    ) -> Result<Vec<RejectedMessage>> {
        let mut rows = Vec::with_capacity(rejected.len());
        let mut reasons = Vec::with_capacity(rejected.len());
        for (n, (index, body, errors)) in rejected.into_iter().enumerate() {
            let m = &messages[index];
            let source = json!({
                "topic": m.topic,
                "partition": m.partition,
                "offset": m.offset,
                "key": m.key.as_deref().map(String::from_utf8_lossy),
            });
            let digest = hex(&Sha256::digest(m.payload.as_deref().unwrap_or_default()));
            let errors: Vec<Value> = errors.iter().map(|(l, msg)| json!({"location": l, "message": msg})).collect();
            let reason = errors.iter().filter_map(|e| e["message"].as_str()).collect::<Vec<_>>().join("; ");
            rows.push(StoredEvent {
                id: 0,
                // The message's place and bytes: a message read again is the same rejection,
                // and two equal bad messages at two offsets are two (each listed with its own).
                fingerprint: ol::event_fingerprint(&json!({"kafka": source, "sha256": digest, "event": n})),
                kind: "unknown".into(),
                job_namespace: None,
                job_name: None,
                run_id: None,
                event_type: None,
                event_time: None,
                received_at: now,
                submitted_by: Some(kafka_caller().user),
                status: "pending".into(),
                errors: Value::Array(errors),
                summary: json!({"kafka": source}),
                body,
            });
            reasons.push((index, reason));
        }
        let stored = self.store.insert_events(rows).await.map_err(|e| {
            tracing::error!(error = %e, "storing rejected Kafka messages failed");
            Error::from(e)
        })?;
        let outcomes: Vec<EventOutcome> = stored
            .iter()
            .filter(|(_, duplicate)| !duplicate)
            .map(|(e, _)| EventOutcome {
                id: e.id,
                status: "rejected".into(),
                errors: e.errors.clone(),
                summary: e.summary.clone(),
            })
            .collect();
        if !outcomes.is_empty() {
            self.store.finish_events(outcomes).await.map_err(|e| {
                tracing::error!(error = %e, "recording rejected Kafka messages failed");
                Error::from(e)
            })?;
        }
        Ok(stored
            .iter()
            .zip(reasons)
            .map(|((_, duplicate), (index, reason))| RejectedMessage { index, reason, duplicate: *duplicate })
            .collect())
    }
}

/// A rejected message's bytes as its stored body: the text (invalid UTF-8 replaced), cut to
/// `KEPT_BYTES`.
fn kept_text(payload: &[u8]) -> Value {
    let cut = &payload[..payload.len().min(KEPT_BYTES)];
    let mut text = String::from_utf8_lossy(cut).into_owned();
    if payload.len() > KEPT_BYTES {
        text.push_str(&format!("… ({} bytes in all)", payload.len()));
    }
    Value::String(text)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn chunks(mut items: Vec<Value>, size: usize) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    while items.len() > size {
        let rest = items.split_off(size);
        out.push(std::mem::replace(&mut items, rest));
    }
    if !items.is_empty() {
        out.push(items);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_order_and_size() {
        let items: Vec<Value> = (0..2_500).map(Value::from).collect();
        let c = chunks(items, 1_000);
        assert_eq!(c.iter().map(Vec::len).collect::<Vec<_>>(), [1_000, 1_000, 500]);
        assert_eq!(c[2][0], Value::from(2_000));
        assert!(chunks(Vec::new(), 10).is_empty());
    }

    #[test]
    fn a_large_rejected_message_keeps_only_its_start() {
        let big = vec![b'x'; KEPT_BYTES + 10];
        let Value::String(s) = kept_text(&big) else { panic!("text") };
        assert!(s.ends_with(&format!("({} bytes in all)", KEPT_BYTES + 10)), "{}", &s[s.len() - 40..]);
        assert_eq!(kept_text(b"\xffok"), Value::String("\u{fffd}ok".into()));
    }
}
