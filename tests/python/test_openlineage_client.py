"""The stock openlineage-python client, pointed at a running Tributary with only a URL and a
token, builds the graph that lineageGraph, fieldConnections and piiFlow then return.

Run by scripts/test against each store: TRIBUTARY_URL names the running service.
"""

import json
import os
import urllib.request
import uuid
from datetime import datetime, timezone

import pytest
import requests
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, JobEvent, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    documentation_dataset,
    lifecycle_state_change_dataset,
)
from openlineage.client.transport.http import (
    ApiKeyTokenProvider,
    HttpCompression,
    HttpConfig,
    HttpTransport,
)

URL = os.environ.get("TRIBUTARY_URL", "http://127.0.0.1:8080")
TOKEN = os.environ.get("TRIBUTARY_TOKEN", "test-token")
PRODUCER = "https://github.com/your-org/lineage-exporter"


def gql(query, variables=None):
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    req = urllib.request.Request(
        f"{URL}/graphql",
        data=body,
        headers={"content-type": "application/json", "authorization": f"Bearer {TOKEN}"},
    )
    with urllib.request.urlopen(req) as r:
        out = json.load(r)
    assert not out.get("errors"), out
    return out["data"]


def client(compression=None):
    config = HttpConfig(url=URL, auth=ApiKeyTokenProvider({"apiKey": TOKEN}))
    if compression is not None:
        config.compression = compression
    return OpenLineageClient(transport=HttpTransport(config))


def now():
    return datetime.now(timezone.utc).isoformat()


@pytest.fixture
def warehouse():
    """A datastore with its own namespace, so tests never see each other's data."""
    ns = f"postgres://pyclient-{uuid.uuid4().hex[:8]}.example.com:5432"
    ds = gql(
        "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
        {"i": {"name": ns, "type": "postgresql", "namespaces": [ns]}},
    )["upsertDatastore"]["id"]
    ids = {}
    for name, fields in [("raw_orders", ["id", "amount", "email"]), ("orders", ["order_total", "email"]), ("audit", ["id"])]:
        c = gql(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id fields { items { id name } } } }",
            {"i": {"datastoreId": ds, "database": "analytics", "schema": "public", "name": name,
                   "fields": [{"name": f} for f in fields]}},
        )["upsertContainer"]
        ids[name] = c["id"]
        for f in c["fields"]["items"]:
            ids[f"{name}.{f['name']}"] = f["id"]
    return ns, ids


def dataset(ns, name, cls=InputDataset, facets=None):
    return cls(namespace=ns, name=f"analytics.public.{name}", facets=facets or {})


def column_lineage(ns, mapping):
    fields = {}
    for out_field, (in_name, in_field, subtype) in mapping.items():
        fields[out_field] = column_lineage_dataset.Fields(
            inputFields=[
                column_lineage_dataset.InputField(
                    namespace=ns,
                    name=f"analytics.public.{in_name}",
                    field=in_field,
                    transformations=[column_lineage_dataset.Transformation(type="DIRECT", subtype=subtype)],
                )
            ]
        )
    return column_lineage_dataset.ColumnLineageDatasetFacet(fields=fields)


def upstream_names(container_id):
    g = gql(
        "query($c: Int!) { lineageGraph(containerId: $c, side: UPSTREAM) { nodes { name } } }",
        {"c": container_id},
    )["lineageGraph"]
    return sorted(n["name"] for n in g["nodes"])


def test_run_event_with_column_lineage_builds_the_graph(warehouse):
    ns, ids = warehouse
    orders = dataset(ns, "orders", OutputDataset, {
        "documentation": documentation_dataset.DocumentationDatasetFacet(description="One row per order"),
        "columnLineage": column_lineage(ns, {
            "order_total": ("raw_orders", "amount", "AGGREGATION"),
            "email": ("raw_orders", "email", "IDENTITY"),
        }),
    })
    client().emit(RunEvent(
        eventType=RunState.COMPLETE, eventTime=now(), run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace="nightly", name="load_orders"), producer=PRODUCER,
        inputs=[dataset(ns, "raw_orders")], outputs=[orders],
    ))
    assert upstream_names(ids["orders"]) == ["orders", "raw_orders"]
    conn = gql(
        "query($f: Int!) { fieldConnections(fieldId: $f) { fields { name containerId } } }",
        {"f": ids["raw_orders.email"]},
    )["fieldConnections"]
    assert conn["fields"] == [{"name": "email", "containerId": ids["orders"]}]
    flow = gql(
        "query($f: Int!) { piiFlow(fieldId: $f) { fields { derived field { name } } } }",
        {"f": ids["raw_orders.email"]},
    )["piiFlow"]
    assert flow["fields"] == [{"derived": False, "field": {"name": "email"}}]
    total = gql(
        "query($f: Int!) { piiFlow(fieldId: $f) { fields { derived field { name } } } }",
        {"f": ids["raw_orders.amount"]},
    )["piiFlow"]
    assert total["fields"] == [{"derived": True, "field": {"name": "order_total"}}]


def test_job_event_gives_design_time_lineage(warehouse):
    ns, ids = warehouse
    client().emit(JobEvent(
        eventTime=now(), job=Job(namespace="design", name=f"plan-{uuid.uuid4().hex[:6]}"), producer=PRODUCER,
        inputs=[dataset(ns, "raw_orders")], outputs=[dataset(ns, "audit", OutputDataset)],
    ))
    edges = gql(
        "query($c: Int!) { edges(containerId: $c) { items { operation sourceContainerId evidence { evidenceType } } } }",
        {"c": ids["audit"]},
    )["edges"]["items"]
    assert edges == [{"operation": "job_event", "sourceContainerId": ids["raw_orders"],
                      "evidence": [{"evidenceType": "job_event"}]}]


def test_failed_run_retires_what_it_alone_asserted(warehouse):
    ns, ids = warehouse
    run = str(uuid.uuid4())
    job = Job(namespace="nightly", name=f"flaky-{uuid.uuid4().hex[:6]}")
    c = client()
    c.emit(RunEvent(eventType=RunState.START, eventTime=now(), run=Run(runId=run), job=job, producer=PRODUCER,
                    inputs=[dataset(ns, "orders")], outputs=[dataset(ns, "audit", OutputDataset)]))
    assert upstream_names(ids["audit"]) == ["audit", "orders"]
    c.emit(RunEvent(eventType=RunState.FAIL, eventTime=now(), run=Run(runId=run), job=job, producer=PRODUCER))
    assert upstream_names(ids["audit"]) == ["audit"]
    retired = gql(
        "query($c: Int!) { edges(containerId: $c, includeRetired: true) { items { retiredAt } } }",
        {"c": ids["audit"]},
    )["edges"]["items"]
    assert len(retired) == 1 and retired[0]["retiredAt"]


def test_drop_retires_the_dataset_lineage(warehouse):
    ns, ids = warehouse
    job = Job(namespace="nightly", name=f"dropper-{uuid.uuid4().hex[:6]}")
    c = client()
    c.emit(RunEvent(eventType=RunState.COMPLETE, eventTime=now(), run=Run(runId=str(uuid.uuid4())), job=job,
                    producer=PRODUCER, inputs=[dataset(ns, "raw_orders")], outputs=[dataset(ns, "audit", OutputDataset)]))
    assert upstream_names(ids["audit"]) == ["audit", "raw_orders"]
    drop = lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet(
        lifecycleStateChange=lifecycle_state_change_dataset.LifecycleStateChange.DROP)
    c.emit(RunEvent(eventType=RunState.COMPLETE, eventTime=now(), run=Run(runId=str(uuid.uuid4())),
                    job=Job(namespace="nightly", name="drop-audit"), producer=PRODUCER,
                    outputs=[dataset(ns, "audit", OutputDataset, {"lifecycleStateChange": drop})]))
    assert upstream_names(ids["audit"]) == ["audit"]


def test_gzip_compressed_events_are_accepted(warehouse):
    ns, ids = warehouse
    client(HttpCompression.GZIP).emit(RunEvent(
        eventType=RunState.COMPLETE, eventTime=now(), run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace="nightly", name=f"gz-{uuid.uuid4().hex[:6]}"), producer=PRODUCER,
        inputs=[dataset(ns, "orders")], outputs=[dataset(ns, "audit", OutputDataset)],
    ))
    assert upstream_names(ids["audit"]) == ["audit", "orders"]


def test_a_rejected_event_raises_in_the_client(warehouse):
    """An event from the future is refused 422 (not a refused connection or a 401, which would
    raise too), and nothing of it is stored: no edge, no event in the log."""
    ns, ids = warehouse
    future = datetime(2999, 1, 1, tzinfo=timezone.utc).isoformat()
    run_id = str(uuid.uuid4())
    with pytest.raises(requests.HTTPError) as refused:
        client().emit(RunEvent(
            eventType=RunState.COMPLETE, eventTime=future, run=Run(runId=run_id),
            job=Job(namespace="nightly", name="from-the-future"), producer=PRODUCER,
            inputs=[dataset(ns, "raw_orders")], outputs=[dataset(ns, "orders", OutputDataset)],
        ))
    answer = refused.value.response
    assert answer.status_code == 422, answer.text
    assert "eventTime" in answer.text, answer.text
    assert upstream_names(ids["orders"]) == ["orders"]
    events = gql(
        "query($r: String) { openLineageEvents(runId: $r) { items { status } } }", {"r": run_id}
    )["openLineageEvents"]["items"]
    assert events == [], events
