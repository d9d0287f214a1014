"""The change feed pushed over websockets (issue 19): a real `graphql-transport-ws` client (gql
with its websockets transport) subscribes to `lineageChanged` on a container, the stock
openlineage-python client sends a run that feeds it, and the subscriber receives the change.
On Neo4j a second `tributary serve` on the same database delivers the change written through
the first: the feed comes from the store, not from one process's memory.

Run by scripts/test against each store: TRIBUTARY_URL names the running service,
TRIBUTARY_TOKEN its admin token, TRIBUTARY_CLIENT_STORE the store, TRIBUTARY_BIN the binary.
"""

import asyncio
import json
import os
import subprocess
import tempfile
import time
import urllib.request
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
import websockets
from gql import Client, gql as parse
from gql.transport.exceptions import TransportQueryError
from gql.transport.websockets import WebsocketsTransport
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.transport.http import ApiKeyTokenProvider, HttpConfig, HttpTransport
from test_zero_setup import binary, free_port

URL = os.environ.get("TRIBUTARY_URL", "http://127.0.0.1:8080")
TOKEN = os.environ.get("TRIBUTARY_TOKEN", "test-token")
STORE = os.environ.get("TRIBUTARY_CLIENT_STORE", "embedded")
PRODUCER = "https://github.com/your-org/lineage-exporter"

SUBSCRIPTION = parse(
    """subscription($c: Int!, $after: String) {
      lineageChanged(containerId: $c, depth: 2, after: $after) {
        cursor kind at containerIds
        edge { id sourceContainerId targetContainerId sourceType operation }
      }
    }"""
)


def gql(query, variables=None, url=URL):
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    req = urllib.request.Request(
        f"{url}/graphql",
        data=body,
        headers={"content-type": "application/json", "authorization": f"Bearer {TOKEN}"},
    )
    with urllib.request.urlopen(req) as r:
        out = json.load(r)
    assert not out.get("errors"), out
    return out["data"]


def ws_url(url):
    return url.replace("http://", "ws://", 1) + "/graphql"


def head_cursor(url=URL):
    """The change log's end cursor now: a subscription from here misses nothing that follows."""
    after = None
    while True:
        page = gql(
            "query($after: String) { changes(after: $after, first: 1000) { endCursor hasMore } }",
            {"after": after},
            url,
        )["changes"]
        after = page["endCursor"]
        if not page["hasMore"]:
            return after


@pytest.fixture
def tables():
    """A datastore with its own namespace and two tables, so tests never see each other's data."""
    ns = f"postgres://subscribe-{uuid.uuid4().hex[:8]}.example.com:5432"
    ds = gql(
        "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
        {"i": {"name": ns, "type": "postgresql", "namespaces": [ns]}},
    )["upsertDatastore"]["id"]
    ids = {}
    for name in ["raw_orders", "orders"]:
        ids[name] = gql(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
            {"i": {"datastoreId": ds, "database": "analytics", "schema": "public", "name": name}},
        )["upsertContainer"]["id"]
    return ns, ids


def send_run(ns):
    """raw_orders feeds orders, through the stock client."""
    client = OpenLineageClient(
        transport=HttpTransport(HttpConfig(url=URL, auth=ApiKeyTokenProvider({"apiKey": TOKEN})))
    )
    client.emit(
        RunEvent(
            eventType=RunState.COMPLETE,
            eventTime=datetime.now(timezone.utc).isoformat(),
            run=Run(runId=str(uuid.uuid4())),
            job=Job(namespace="subscriptions", name=f"build_orders_{uuid.uuid4().hex[:6]}"),
            producer=PRODUCER,
            inputs=[InputDataset(namespace=ns, name="analytics.public.raw_orders")],
            outputs=[OutputDataset(namespace=ns, name="analytics.public.orders")],
        )
    )


async def receive_edge(url, container, after, source, target, send, timeout=30):
    """Subscribes on `url`, calls `send` once subscribed, and returns the first change whose edge
    joins `source` to `target`."""
    transport = WebsocketsTransport(
        url=ws_url(url),
        init_payload={"Authorization": f"Bearer {TOKEN}"},
        subprotocols=[WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL],
    )
    async with Client(transport=transport, fetch_schema_from_transport=False) as session:

        async def first_match():
            async for result in session.subscribe(SUBSCRIPTION, variable_values={"c": container, "after": after}):
                change = result["lineageChanged"]
                edge = change["edge"] or {}
                if (edge.get("sourceContainerId"), edge.get("targetContainerId")) == (source, target):
                    return change

        task = asyncio.ensure_future(first_match())
        await asyncio.sleep(0.5)
        await asyncio.get_running_loop().run_in_executor(None, send)
        return await asyncio.wait_for(task, timeout)


def test_a_subscriber_receives_the_change_an_openlineage_run_makes(tables):
    ns, ids = tables
    after = head_cursor()
    change = asyncio.run(
        receive_edge(URL, ids["orders"], after, ids["raw_orders"], ids["orders"], lambda: send_run(ns))
    )
    assert change["kind"] == "EDGE_ASSERTED"
    assert sorted(change["containerIds"]) == sorted([ids["raw_orders"], ids["orders"]])
    assert change["edge"]["sourceType"] == "openlineage"
    # The same change is in the log the `changes` query pages through, at the same cursor, in a
    # read sent right after the push (tests/integration/changes.rs hammers this case).
    want = {"cursor": change["cursor"], "kind": "EDGE_ASSERTED", "edgeId": change["edge"]["id"]}
    page = gql(
        "query($after: String, $c: Int) { changes(after: $after, containerId: $c) { items { cursor kind edgeId } } }",
        {"after": after, "c": ids["orders"]},
    )["changes"]["items"]
    assert want in page, (after, page)


def test_a_connection_without_a_valid_token_is_closed_4401():
    async def close_code(payload):
        async with websockets.connect(ws_url(URL), subprotocols=["graphql-transport-ws"]) as ws:
            await ws.send(json.dumps({"type": "connection_init", "payload": payload}))
            try:
                await asyncio.wait_for(ws.recv(), 10)
            except websockets.ConnectionClosed as closed:
                return closed.rcvd.code, closed.rcvd.reason
            return None

    code, reason = asyncio.run(close_code({}))
    assert code == 4401 and "missing API token" in reason, (code, reason)
    code, reason = asyncio.run(close_code({"Authorization": "Bearer not-a-token"}))
    assert (code, reason) == (4401, "invalid or revoked API token")


def test_a_subscriber_too_far_behind_is_told_where_to_resume(tables):
    ns, ids = tables
    ds = gql("{ container(id: %d) { datastoreId } }" % ids["orders"])["container"]["datastoreId"]
    start = gql("{ changes(first: 1) { endCursor } }")["changes"]["endCursor"]
    # More than 10,000 changes at once: a table of 10,100 columns.
    wide = gql(
        "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
        {"i": {"datastoreId": ds, "name": "wide", "fields": [{"name": f"c{i}"} for i in range(10_100)]}},
    )["upsertContainer"]["id"]

    async def subscribe():
        transport = WebsocketsTransport(
            url=ws_url(URL),
            init_payload={"Authorization": f"Bearer {TOKEN}"},
            subprotocols=[WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL],
        )
        async with Client(transport=transport, fetch_schema_from_transport=False) as session:
            async for _ in session.subscribe(SUBSCRIPTION, variable_values={"c": wide, "after": start}):
                pass

    with pytest.raises(TransportQueryError) as raised:
        asyncio.run(asyncio.wait_for(subscribe(), 60))
    error = raised.value.errors[0]
    assert error["extensions"]["code"] == "FELL_BEHIND", error
    assert error["extensions"]["cursor"] == start
    assert start in error["message"]
    # The cursor reads on with `changes`.
    page = gql("query($a: String) { changes(after: $a, first: 1) { items { cursor } } }", {"a": start})
    assert page["changes"]["items"]


@pytest.mark.skipif(STORE != "neo4j" or not os.environ.get("NEO4J_URI"), reason="replicas share a Neo4j")
def test_a_second_replica_on_the_same_neo4j_delivers_the_change(tables):
    ns, ids = tables
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = open(Path(tmp) / "serve.log", "w")
        proc = subprocess.Popen(
            [binary(), "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", str(Path(tmp) / "data"),
             "--neo4j-uri", os.environ["NEO4J_URI"]],
            stdout=log, stderr=subprocess.STDOUT,
        )
        try:
            for _ in range(150):
                try:
                    urllib.request.urlopen(f"{url}/readyz")
                    break
                except OSError:
                    assert proc.poll() is None, (Path(tmp) / "serve.log").read_text()
                    time.sleep(0.2)
            after = head_cursor(url)
            # Subscribed on the second replica; the run goes to the first (URL).
            change = asyncio.run(
                receive_edge(url, ids["raw_orders"], after, ids["raw_orders"], ids["orders"], lambda: send_run(ns))
            )
            assert change["kind"] == "EDGE_ASSERTED"
            assert change["edge"]["sourceType"] == "openlineage"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
            log.close()
