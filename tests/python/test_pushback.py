"""Push-back as the stock openlineage-python client meets it: past the ingest limit the service
answers 503 with Retry-After, which the client retries (it would drop an event answered 429), so
its event lands once the service has room, and is stored exactly once.

Starts its own serve with `--ingest-concurrency 1 --ingest-queue 0` (test_zero_setup.Serve) on
the store scripts/test names in TRIBUTARY_CLIENT_STORE.
"""

import json
import socket
import tempfile
import threading
import time
import urllib.request
import uuid

import pytest
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState

from test_zero_setup import Serve, now, stores


def metric(url, name):
    with urllib.request.urlopen(f"{url}/metrics") as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return 0.0


def wait_for(predicate, what, seconds=30):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.fixture(params=stores())
def limited(request):
    with tempfile.TemporaryDirectory() as tmp:
        s = Serve(request.param, tmp, extra=["--ingest-concurrency", "1", "--ingest-queue", "0"])
        try:
            yield s
        finally:
            s.stop()


def test_the_stock_clients_retries_land_past_the_ingest_limit(limited):
    s = limited
    tag = uuid.uuid4().hex[:8]
    ns = f"postgres://pushback-{tag}.example.com:5432"
    # The one slot, held by a request whose body has not all arrived.
    held = json.dumps({
        "eventType": "COMPLETE", "eventTime": now(), "producer": "https://example.com/held",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": f"held-{tag}", "name": "held"},
        "inputs": [{"namespace": ns, "name": "db.s.a"}], "outputs": [{"namespace": ns, "name": "db.s.b"}],
    }).encode()
    host = s.url.removeprefix("http://")
    conn = socket.create_connection(tuple(host.rsplit(":", 1)), timeout=60)
    conn.sendall(
        f"POST /api/v1/lineage HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {s.token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(held)}\r\nConnection: close\r\n\r\n".encode()
        + held[:10]
    )
    wait_for(lambda: metric(s.url, "tributary_ingest_in_flight") == 1, "the held request's slot")
    refused = metric(s.url, "tributary_ingest_refused_total")

    run_id = str(uuid.uuid4())
    event = RunEvent(
        eventType=RunState.COMPLETE, eventTime=now(), run=Run(runId=run_id),
        job=Job(namespace=f"client-{tag}", name="copy"), producer="https://example.com/client",
        inputs=[InputDataset(namespace=ns, name="db.s.b")], outputs=[OutputDataset(namespace=ns, name="db.s.c")],
    )
    failures = []

    def emit():
        try:
            s.client().emit(event)
        except Exception as e:  # noqa: BLE001 - the assertion below reports it
            failures.append(e)

    sender = threading.Thread(target=emit)
    sender.start()
    # The client was refused (503) at least once ...
    wait_for(lambda: metric(s.url, "tributary_ingest_refused_total") > refused, "the client's first refusal")
    # ... then the slot frees, and its retry (after Retry-After) gets in.
    conn.sendall(held[10:])
    answer = conn.makefile("rb").read().decode()
    conn.close()
    assert answer.startswith("HTTP/1.1 201"), answer
    sender.join(timeout=60)
    assert not sender.is_alive() and not failures, failures
    stored = s.gql(
        "query($r: String!) { openLineageEvents(runId: $r) { total items { status } } }", {"r": run_id}
    )["openLineageEvents"]
    assert stored["total"] == 1, stored
    assert stored["items"][0]["status"] == "applied", stored
