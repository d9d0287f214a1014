"""OpenLineage from Kafka (issue 48): the stock openlineage-python client with its KafkaTransport
(confluent-kafka) writes events to a topic of a real Apache Kafka broker (scripts/kafka-start,
KAFKA_BOOTSTRAP_SERVERS); `tributary serve --kafka-brokers ... --kafka-topic ...` consumes them.

- The lineage Kafka's events give equals what the same events give over HTTP (the same Spark
  and Airflow sequences as the zero-setup test, under two tags, one sent each way).
- A malformed message between good ones is stored as rejected with its topic, partition and
  offset (as `openLineageEvents(status: "rejected")` lists it), copied to the dead-letter topic,
  and the good ones around it are applied: it does not block its partition.
- `/readyz` and `/metrics` show the consumer.

Starts its own serve per store (test_zero_setup.Serve, with the Kafka flags); the broker must be
running (scripts/test starts one): without KAFKA_BOOTSTRAP_SERVERS these tests fail, they do not
skip.
"""

import json
import os
import time
import urllib.request
import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from openlineage.client import OpenLineageClient
from openlineage.client.transport.kafka import KafkaConfig, KafkaTransport

from test_zero_setup import Serve, airflow_sequence, field_edges, graph, spark_sequence, stores


def bootstrap():
    servers = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
    assert servers, "KAFKA_BOOTSTRAP_SERVERS is not set: start a broker with `eval \"$(scripts/kafka-start)\"`"
    return servers


def create_topic(name, partitions):
    admin = AdminClient({"bootstrap.servers": bootstrap()})
    for future in admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)]).values():
        future.result(timeout=30)


def until(what, check, within=120):
    deadline = time.monotonic() + within
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.25)
    raise AssertionError(f"not within {within} s: {what} (last: {last})")


class KafkaServe(Serve):
    """A zero-setup serve that also reads `topic` (and copies rejects to `dead_letter`)."""

    def __init__(self, store, tmp, topic, dead_letter=None):
        extra = ["--kafka-brokers", bootstrap(), "--kafka-topic", topic,
                 "--kafka-group", f"tributary-test-{uuid.uuid4().hex[:8]}", "--kafka-stats-interval-ms", "500"]
        if dead_letter:
            extra += ["--kafka-dead-letter-topic", dead_letter]
        super().__init__(store, tmp, extra)

    def events(self, **filters):
        args = ", ".join(f"{k}: ${k}" for k in filters)
        params = ", ".join(f"${k}: String" for k in filters)
        q = (f"query({params}) {{ openLineageEvents({args}, size: 1000) "
             "{ total items { status kind errors summary body runId submittedBy jobName eventType } } }")
        return self.gql(q, filters)["openLineageEvents"]

    def text(self, path):
        with urllib.request.urlopen(f"{self.url}{path}") as r:
            return r.read().decode()


@pytest.fixture(params=stores())
def store(request):
    return request.param


def all_stored(serve, job_namespace, n):
    """The events of a job namespace once all `n` are stored and none is pending."""
    page = serve.events(jobNamespace=job_namespace)
    return page if page["total"] == n and all(e["status"] != "pending" for e in page["items"]) else None


def comparable(raw_edges, tag):
    """An edge list's evidence with what differs between two sends of the same events taken out
    (run and event ids, who sent them, times) and the tag made neutral."""
    out = []
    for e in raw_edges:
        for ev in e["evidence"]:
            d = {k: v for k, v in ev["details"].items()
                 if k not in ("submittedBy", "eventTime", "parent")
                 and not k.lower().endswith(("runid", "eventid"))}
            out.append((e["sourceContainer"]["name"], e["targetContainer"]["name"],
                        json.dumps(d, sort_keys=True).replace(tag, "TAG")))
    return sorted(out)


def test_kafka_transport_gives_the_lineage_http_gives(store, tmp_path):
    topic = f"openlineage-{uuid.uuid4().hex[:8]}"
    create_topic(topic, 2)
    serve = KafkaServe(store, tmp_path, topic)
    try:
        kafka = OpenLineageClient(transport=KafkaTransport(
            KafkaConfig(config={"bootstrap.servers": bootstrap()}, topic=topic, flush=True)))
        http = serve.client()
        tag_k, tag_h = f"k{uuid.uuid4().hex[:8]}", f"h{uuid.uuid4().hex[:8]}"
        (spark_k, spark_events_k), (spark_h, spark_events_h) = spark_sequence(tag_k), spark_sequence(tag_h)
        (project_k, airflow_k), (project_h, airflow_h) = airflow_sequence(tag_k), airflow_sequence(tag_h)
        for e in spark_events_k + airflow_k:
            kafka.emit(e)
        for e in spark_events_h + airflow_h:
            http.emit(e)

        # The same outcome for each event, whichever way it came; Kafka's name their sender.
        outcomes = {}
        for tag in (tag_k, tag_h):
            spark = until(f"the Spark events of {tag} stored", lambda: all_stored(serve, f"spark-{tag}", 4))
            airflow = until(f"the Airflow events of {tag} stored", lambda: all_stored(serve, f"airflow-{tag}", 6))
            items = spark["items"] + airflow["items"]
            outcomes[tag] = sorted((e["jobName"], e["eventType"], e["status"], (e["summary"] or {}).get("ignored_reason"))
                                   for e in items)
            if tag == tag_k:
                assert {e["submittedBy"] for e in items} == {"kafka"}, items
        assert outcomes[tag_k] == outcomes[tag_h]
        assert sum(1 for o in outcomes[tag_k] if o[2] == "applied") >= 6, outcomes[tag_k]

        # The same graph, the same column lineage, the same evidence, whichever way the events came.
        sk_id, sk_nodes, sk_edges, sk_raw = graph(serve, spark_k, "default.out")
        sh_id, sh_nodes, sh_edges, sh_raw = graph(serve, spark_h, "default.out")
        assert sk_nodes == sh_nodes == [("out", True), ("src1", False), ("src2", False)]
        assert sk_edges == sh_edges == [("src1", "out"), ("src2", "out")]
        assert comparable(sk_raw, tag_k) == comparable(sh_raw, tag_h)
        assert field_edges(serve, sk_id) == field_edges(serve, sh_id) == {
            ("a", "ident"): False, ("b", "agg"): True, ("c", "agg"): True}

        ak_id, ak_nodes, ak_edges, ak_raw = graph(serve, "bigquery", f"{project_k}.mart.daily")
        ah_id, ah_nodes, ah_edges, ah_raw = graph(serve, "bigquery", f"{project_h}.mart.daily")
        assert ak_nodes == ah_nodes == [("daily", True), ("daily/orders.csv", False), ("orders", False)]
        assert ak_edges == ah_edges == [("daily", "daily/orders.csv"), ("orders", "daily")]
        assert comparable(ak_raw, tag_k) == comparable(ah_raw, tag_h)
        assert field_edges(serve, ak_id) == field_edges(serve, ah_id)

        # Sending the Kafka events again over HTTP changes nothing: the same content is the same event.
        again = serve.gql(
            "mutation($e: [JSON!]!) { ingestOpenLineage(events: $e) { applied ignored events { summary } } }",
            {"e": [json.loads(_json(e)) for e in spark_events_k]},
        )["ingestOpenLineage"]
        assert again["applied"] == 0 and again["ignored"] == 4, again
        assert all(ev["summary"]["ignored_reason"] == "duplicate" for ev in again["events"]), again

        # What the consumer shows.
        ready = serve.text("/readyz")
        assert ready.startswith("ready\nkafka: consuming"), ready
        assert "2 partition(s) assigned" in ready, ready
        metrics = serve.text("/metrics")
        consumed = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                       if line.startswith("tributary_kafka_messages_consumed_total{") and f'topic="{topic}"' in line)
        assert consumed == 10, metrics
        taken = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                    if line.startswith("tributary_kafka_events_total{") and 'status="rejected"' not in line)
        assert taken == 10, metrics
        assert 'tributary_kafka_consumer_state{state="consuming"} 1' in metrics, metrics
        lags = until("the lag of both partitions reported at 0",
                     lambda: [l for l in serve.text("/metrics").splitlines()
                              if l.startswith("tributary_kafka_consumer_lag{") and f'topic="{topic}"' in l
                              and l.endswith(" 0")])
        assert len(lags) == 2, lags
    finally:
        serve.stop()


def _json(event):
    from openlineage.client.serde import Serde

    return Serde.to_json(event)


def test_a_malformed_message_is_rejected_with_its_offset_and_does_not_block(store, tmp_path):
    topic = f"openlineage-bad-{uuid.uuid4().hex[:8]}"
    dead_letter = f"{topic}-dead"
    create_topic(topic, 1)
    create_topic(dead_letter, 1)
    serve = KafkaServe(store, tmp_path, topic, dead_letter)
    try:
        tag = f"m{uuid.uuid4().hex[:8]}"
        spark_ns, events = spark_sequence(tag)
        offsets = {}

        def delivered(name):
            def cb(err, msg):
                assert err is None, err
                offsets[name] = msg.offset()
            return cb

        producer = Producer({"bootstrap.servers": bootstrap()})
        # good, good, not JSON, good, JSON that is no OpenLineage event, good: one partition, in order.
        payloads = [("good0", _json(events[0])), ("good1", _json(events[1])), ("garbage", "{not json at all"),
                    ("good2", _json(events[2])), ("not-openlineage", json.dumps({"hello": "world"})),
                    ("good3", _json(events[3]))]
        for name, value in payloads:
            producer.produce(topic, value=value.encode(), key=name.encode(), on_delivery=delivered(name))
        assert producer.flush(30) == 0

        spark = until("the good events stored", lambda: all_stored(serve, f"spark-{tag}", 4))
        assert {e["status"] for e in spark["items"]} <= {"applied", "recorded", "ignored"}, spark
        # The good ones around the bad ones drew their lineage.
        _, nodes, edges, _ = graph(serve, spark_ns, "default.out")
        assert edges == [("src1", "out"), ("src2", "out")], edges

        def rejected():
            items = [e for e in serve.events(status="rejected")["items"]
                     if (e["summary"] or {}).get("kafka", {}).get("topic") == topic]
            return items if len(items) == 2 else None

        by_key = {e["summary"]["kafka"]["key"]: e for e in until("both bad messages rejected", rejected)}
        garbage, other = by_key["garbage"], by_key["not-openlineage"]
        assert garbage["summary"]["kafka"] == {"topic": topic, "partition": 0, "offset": offsets["garbage"], "key": "garbage"}
        assert other["summary"]["kafka"]["offset"] == offsets["not-openlineage"]
        assert garbage["body"] == "{not json at all" and garbage["submittedBy"] == "kafka"
        assert "JSON" in garbage["errors"][0]["message"], garbage
        assert other["body"] == {"hello": "world"}
        assert other["errors"], other

        # Both copied to the dead-letter topic, saying where they came from.
        consumer = Consumer({"bootstrap.servers": bootstrap(), "group.id": f"dlq-{tag}", "auto.offset.reset": "earliest"})
        consumer.subscribe([dead_letter])
        copies = {}
        deadline = time.monotonic() + 60
        while len(copies) < 2 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            headers = {k: v.decode() for k, v in msg.headers() or []}
            copies[msg.key().decode()] = (msg.value(), headers)
        consumer.close()
        assert copies["garbage"][0] == b"{not json at all"
        assert copies["garbage"][1]["tributary.source.offset"] == str(offsets["garbage"])
        assert copies["garbage"][1]["tributary.source.topic"] == topic
        assert copies["not-openlineage"][1]["tributary.source.offset"] == str(offsets["not-openlineage"])

        metrics = serve.text("/metrics")
        assert 'tributary_kafka_events_total{status="rejected"} 2' in metrics, metrics
        assert 'tributary_kafka_dead_lettered_total{outcome="sent"} 2' in metrics, metrics
    finally:
        serve.stop()
