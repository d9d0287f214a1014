"""The database goes away and comes back (issue 21, part 1), with real processes only.

A Neo4j of the test's own (scripts/neo4j-start; the suite's Neo4j at NEO4J_URI is never
stopped) serves a `tributary serve` that was started BEFORE it, so serve's wait at start is
exercised too. Then the stock openlineage-python client sends events from several threads, with
its HTTP transport's retries, while GraphQL readers read; the test stops Neo4j, checks what a
user sees while it is down (`/readyz` 503, REST ingest 503 with `Retry-After`, GraphQL
`UNAVAILABLE`, no call hanging past the store timeout, memory bounded), starts Neo4j again on
the same port with the same data, and checks that serve recovers without a restart, that every
send the client made returned 2xx in the end, and that exactly the acknowledged events are in
the graph, once each.

Runs for the neo4j client store of scripts/test (TRIBUTARY_CLIENT_STORE=neo4j), or by hand
when NEO4J_URI is set (as a sign that Java and the launcher are there).
"""

import json
import os
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.transport.http import HttpConfig, HttpTransport

from test_zero_setup import binary, free_port

REPO = Path(__file__).resolve().parents[2]
STORE_TIMEOUT_SECS = 5
SENDERS = 4
READERS = 2


def wanted():
    named = os.environ.get("TRIBUTARY_CLIENT_STORE")
    return named == "neo4j" if named else bool(os.environ.get("NEO4J_URI"))


pytestmark = pytest.mark.skipif(
    not wanted(), reason="the Neo4j outage runs with the neo4j client store (TRIBUTARY_CLIENT_STORE=neo4j)"
)


class Neo4j:
    """A Neo4j of this test's own, stoppable and restartable on one port with one data dir."""

    def __init__(self, run_dir, port):
        # Without the suite's TRIBUTARY_NEO4J_PID / _HOME: neo4j-stop must never find those.
        base = {k: v for k, v in os.environ.items() if k not in ("TRIBUTARY_NEO4J_PID", "TRIBUTARY_NEO4J_HOME")}
        self.env = {**base, "TRIBUTARY_NEO4J_RUN_DIR": str(run_dir), "TRIBUTARY_NEO4J_HOME": str(run_dir)}
        self.port = port

    def start(self):
        subprocess.run([str(REPO / "scripts" / "neo4j-start"), str(self.port)],
                       env=self.env, check=True, capture_output=True, text=True, timeout=180)

    def stop(self, keep=True):
        # The pid comes from the run dir's pid file (scripts/neo4j-stop reads it there).
        env = {**self.env, "TRIBUTARY_NEO4J_KEEP": "1" if keep else "0"}
        subprocess.run([str(REPO / "scripts" / "neo4j-stop")], env=env, check=True, capture_output=True, timeout=60)


class Serve:
    def __init__(self, tmp, neo4j_port):
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = Path(tmp) / "serve.log"
        self.log = open(self.log_path, "w")
        env = {**os.environ, "TRIBUTARY_STORE_TIMEOUT_SECS": str(STORE_TIMEOUT_SECS), "NO_COLOR": "1"}
        self.proc = subprocess.Popen(
            [binary(), "serve", "--listen", f"127.0.0.1:{port}", "--auth", "off", "--openlineage-zero-setup",
             "--neo4j-uri", f"bolt://127.0.0.1:{neo4j_port}", "--store-wait-secs", "180"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env,
        )

    def text(self):
        return self.log_path.read_text()

    def rss_kib(self):
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def http(method, url, body=None, timeout=30):
    """(status, headers, text, seconds) of one plain request, no retries."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read().decode(), time.monotonic() - t0
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode(), time.monotonic() - t0
    except urllib.error.URLError as e:  # not listening (yet): status 0
        return 0, {}, str(e), time.monotonic() - t0


def gql(url, query, variables=None):
    status, _, text, secs = http("POST", f"{url}/graphql", {"query": query, "variables": variables or {}})
    return json.loads(text), secs


def until(what, check, within):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"not within {within} s: {what}")


def event(ns, i, run_id):
    return RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=datetime.now(timezone.utc).isoformat(),
        run=Run(runId=run_id),
        job=Job(namespace=ns, name=f"job_{i}"),
        producer="https://github.com/tributary/outage-test",
        inputs=[InputDataset(namespace=ns, name=f"analytics.public.in_{i}")],
        outputs=[OutputDataset(namespace=ns, name=f"analytics.public.out_{i}")],
    )


def stock_client(url):
    """The client as a producer would configure it: its own retries, generous enough to ride out
    a database restart (urllib3 waits the `Retry-After` the service sends between tries)."""
    config = HttpConfig.from_dict({
        "url": url,
        "timeout": 30,
        "retry": {"total": 60, "connect": 60, "read": 60, "status": 60, "backoff_factor": 0.5,
                  "status_forcelist": [500, 502, 503, 504], "allowed_methods": ["POST"]},
    })
    return OpenLineageClient(transport=HttpTransport(config))


def test_neo4j_stops_and_starts_while_clients_send_and_read():
    with tempfile.TemporaryDirectory() as tmp:
        neo4j = Neo4j(Path(tmp) / "neo4j", free_port())
        serve = Serve(tmp, neo4j.port)
        try:
            run_outage(neo4j, serve)
        finally:
            serve.stop()
            neo4j.stop(keep=False)


def run_outage(neo4j, serve):
    # Started before its database: serve waits, saying so, instead of exiting.
    until("serve logs that it waits for Neo4j", lambda: "will keep trying" in serve.text(), 30)
    assert serve.proc.poll() is None, serve.text()
    neo4j.start()
    until("serve ready once Neo4j is up", lambda: http("GET", f"{serve.url}/readyz")[0] == 200
          if serve.proc.poll() is None else True, 90)
    assert serve.proc.poll() is None, serve.text()
    assert "Neo4j reachable; starting" in serve.text()

    ns = f"postgres://outage-{uuid.uuid4().hex[:8]}:5432"
    acked, failures, next_i, lock = set(), [], [0], threading.Lock()
    stop = threading.Event()

    def sender():
        client = stock_client(serve.url)
        while not stop.is_set():
            with lock:
                i = next_i[0]
                next_i[0] += 1
            run_id = str(uuid.uuid4())
            try:
                client.emit(event(ns, i, run_id))  # raises unless the last try got a 2xx
            except Exception as e:  # noqa: BLE001 - any failure is the finding
                failures.append(f"event {i}: {e!r}")
                return
            with lock:
                acked.add(run_id)

    reads = []

    def reader():
        while not stop.is_set():
            out, secs = gql(serve.url, "{ datastores { id name } }")
            code = (out.get("errors") or [{}])[0].get("extensions", {}).get("code")
            reads.append((time.monotonic(), code, secs))
            time.sleep(0.05)

    threads = [threading.Thread(target=sender) for _ in range(SENDERS)]
    threads += [threading.Thread(target=reader) for _ in range(READERS)]
    for t in threads:
        t.start()
    try:
        until("events acknowledged before the outage", lambda: len(acked) >= 40 or failures, 120)
        rss_before = serve.rss_kib()
        neo4j.stop(keep=True)

        # While it is down: what every kind of caller sees, each answer within the store timeout.
        until("/readyz says not ready", lambda: http("GET", f"{serve.url}/readyz")[0] == 503, 30)
        down_at = time.monotonic()
        status, headers, text, secs = http("POST", f"{serve.url}/api/v1/lineage", json.loads(
            '{"eventType": "COMPLETE", "eventTime": "%s", "producer": "https://x", "run": {"runId": "%s"},'
            ' "job": {"namespace": "%s", "name": "direct"}, "inputs": [], "outputs": []}'
            % (datetime.now(timezone.utc).isoformat(), uuid.uuid4(), ns + "-direct")))
        assert status == 503, text
        assert headers.get("Retry-After") == "2", dict(headers)
        assert secs < STORE_TIMEOUT_SECS + 5, secs
        out, secs = gql(serve.url, "{ datastores { id } }")
        assert out["errors"][0]["extensions"]["code"] == "UNAVAILABLE", out
        assert secs < STORE_TIMEOUT_SECS + 5, secs
        time.sleep(3)
        rss_down = serve.rss_kib()
        acked_when_down = len(acked)

        up_at = time.monotonic()  # from here on, reads may succeed again
        neo4j.start()
        # Recovered without a restart of serve: its pool dials the new server.
        until("/readyz ready again", lambda: http("GET", f"{serve.url}/readyz")[0] == 200, 60)
        assert serve.proc.poll() is None
        until("events acknowledged after the outage", lambda: len(acked) >= acked_when_down + 40 or failures, 120)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=180)
    assert not any(t.is_alive() for t in threads), "a client hung"
    assert not failures, failures

    # Nothing hung: every read answered within the store timeout (plus the request's own time).
    slowest = max(secs for _, _, secs in reads)
    assert slowest < STORE_TIMEOUT_SECS + 5, slowest
    during = [code for at, code, _ in reads if down_at < at < up_at]
    assert during and all(code == "UNAVAILABLE" for code in during), during
    # Memory bounded: refused requests and retries do not pile up.
    assert rss_down < rss_before + 100 * 1024, (rss_before, rss_down)

    # The client's retries did the work: ingest answered 503 during the outage, and yet every
    # send above ended in a 2xx.
    _, _, metrics, _ = http("GET", f"{serve.url}/metrics")
    refused = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                  if line.startswith("tributary_http_requests_total{") and 'path="/api/v1/lineage"' in line
                  and 'status="503"' in line)
    assert refused >= 1, "no ingest was refused while Neo4j was down"

    # Exactly the acknowledged events, once each, applied; one edge with one evidence each.
    events = []
    page = 1
    while True:
        out, _ = gql(serve.url, "query($ns: String, $p: Int) { openLineageEvents(jobNamespace: $ns, page: $p, size: 1000)"
                     " { items { status runId } pages } }", {"ns": ns, "p": page})
        events += out["data"]["openLineageEvents"]["items"]
        if page >= out["data"]["openLineageEvents"]["pages"]:
            break
        page += 1
    assert sorted({e["status"] for e in events}) == ["applied"], events
    stored = [e["runId"] for e in events]
    assert len(stored) == len(set(stored)), "each event stored once"
    assert set(stored) == acked, (len(stored), len(acked))
    found = edges_found(serve.url, ns, acked)
    assert found == len(acked), (found, len(acked))
    print(f"outage: {len(acked)} events acknowledged ({acked_when_down} before Neo4j came back, {refused:.0f} "
          f"ingest requests answered 503 meanwhile), "
          f"{found} in the graph; {len(during)} reads UNAVAILABLE while down; RSS {rss_before} -> {rss_down} KiB")


def edges_found(url, ns, acked):
    """How many acknowledged runs have their edge out_i <- in_i, with exactly one evidence."""
    out, _ = gql(url, "{ datastores { id name } }")
    ds = next(d["id"] for d in out["data"]["datastores"] if d["name"] == ns)
    containers, page = {}, 1
    while True:
        out, _ = gql(url, "query($d: Int, $p: Int) { containers(datastoreId: $d, page: $p, size: 1000)"
                     " { items { id name } pages } }", {"d": ds, "p": page})
        containers.update({c["name"]: c["id"] for c in out["data"]["containers"]["items"]})
        if page >= out["data"]["containers"]["pages"]:
            break
        page += 1
    assert len(containers) == 2 * len(acked), "two containers per event and no others"
    outs = [(n, i) for n, i in containers.items() if n.startswith("out_")]
    found = 0
    for k in range(0, len(outs), 50):
        chunk = outs[k:k + 50]
        q = " ".join(f"e{j}: edges(containerId: {cid}, size: 10) {{ items {{ sourceContainerId evidence {{ details }} }} }}"
                     for j, (_, cid) in enumerate(chunk))
        out, _ = gql(url, "{ " + q + " }")
        for j, (name, _) in enumerate(chunk):
            items = out["data"][f"e{j}"]["items"]
            assert len(items) == 1, (name, items)
            assert items[0]["sourceContainerId"] == containers[name.replace("out_", "in_", 1)]
            assert len(items[0]["evidence"]) == 1, (name, items)
            if items[0]["evidence"][0]["details"]["runId"] in acked:
                found += 1
    return found
