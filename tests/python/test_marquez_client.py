"""Marquez's own Python client (marquez-python), unchanged, against Tributary's Marquez read API
with Tributary's token as its api_key, after real events are ingested: Marquez's apples
sequence (its lineage-graph test, from the shared corpus) and a catalogued table whose columns
an OpenLineage columnLineage facet connects.

Run by scripts/test against each store: TRIBUTARY_URL names the running service. Names are
made unique per run (the Neo4j store is shared).
"""

import json
import os
from datetime import datetime
import pathlib
import urllib.request
import uuid

import pytest
import requests
from marquez_client import MarquezClient
from marquez_client.errors import APIError

URL = os.environ.get("TRIBUTARY_URL", "http://127.0.0.1:8080")
TOKEN = os.environ.get("TRIBUTARY_TOKEN", "test-token")
AUTH = {"authorization": f"Bearer {TOKEN}"}
ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = pathlib.Path(
    os.environ.get("TRIBUTARY_SHARED_FIXTURES", ROOT.parent / "shared" / "fixtures" / "openlineage")
)
PRODUCER = "https://github.com/your-org/lineage-exporter"


def status_of(raised):
    """The HTTP status behind a marquez-python APIError: the client raises it bare, `from` the
    requests HTTPError that holds the server's response."""
    cause = raised.value.__cause__
    assert isinstance(cause, requests.HTTPError), repr(cause)
    return cause.response.status_code


def gql(query, variables=None):
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    req = urllib.request.Request(
        f"{URL}/graphql", data=body, headers={"content-type": "application/json", **AUTH}
    )
    with urllib.request.urlopen(req) as r:
        out = json.load(r)
    assert not out.get("errors"), out
    return out["data"]


def ingest(events):
    r = requests.post(f"{URL}/api/v1/lineage", json=events, headers=AUTH, timeout=60)
    assert r.status_code == 201, r.text


@pytest.fixture(scope="module")
def marquez():
    return MarquezClient(url=URL, api_key=TOKEN)


@pytest.fixture(scope="module")
def apples():
    """Marquez's apples events, with their namespaces and run ids made unique to this run."""
    tag = uuid.uuid4().hex[:8]
    files = sorted((CORPUS / "27_marquez_apples_graph").glob("*.json"), key=lambda p: int(p.name.split("_")[0]))
    assert files, f"the shared corpus is missing at {CORPUS}"
    text = "\n".join(p.read_text() for p in files)
    runs = {}
    events = []
    for p in files:
        e = json.loads(p.read_text())
        for d in e.get("inputs", []) + e.get("outputs", []) + [e["job"]]:
            d["namespace"] = f"{d['namespace']}-{tag}"
        e["run"]["runId"] = runs.setdefault(e["run"]["runId"], str(uuid.uuid4()))
        events.append(e)
    assert "grandmas.kitchen" in text
    for e in events:
        ingest(e)
    return {"kitchen": f"grandmas.kitchen-{tag}", "backyard": f"backyard-{tag}", "events": events}


def test_namespaces(marquez, apples):
    names = {n["name"] for n in marquez.list_namespaces(limit=1000)["namespaces"]}
    assert {apples["kitchen"], apples["backyard"]} <= names
    assert marquez.get_namespace(apples["kitchen"])["name"] == apples["kitchen"]


def test_datasets(marquez, apples):
    listed = marquez.list_datasets(apples["kitchen"])
    assert [d["name"] for d in listed["datasets"]] == ["apple.cider", "apple.filling", "apple.pie", "apples", "cinnamon"]
    pie = marquez.get_dataset(apples["kitchen"], "apple.pie")
    assert pie["id"] == {"namespace": apples["kitchen"], "name": "apple.pie"}
    assert pie["type"] == "DB_TABLE" and pie["lastModifiedAt"] == "2020-10-16T05:00:00.000000Z"
    with pytest.raises(APIError) as missing:
        marquez.get_dataset(apples["kitchen"], "apple.strudel")
    assert status_of(missing) == 404


def test_jobs_and_runs(marquez, apples):
    jobs = marquez.list_jobs(apples["kitchen"])
    assert jobs["totalCount"] == 5
    gather = marquez.get_job(apples["kitchen"], "gather_apples")
    # The current version picks crab apples (7_pick_different_apples), as Marquez shows it.
    assert gather["inputs"] == [{"namespace": apples["backyard"], "name": "crab.apples"}]
    assert gather["latestRun"]["state"] == "COMPLETED"
    runs = marquez.list_job_runs(apples["kitchen"], "gather_apples")["runs"]
    first, second = apples["events"][0]["run"]["runId"], apples["events"][5]["run"]["runId"]
    assert [r["id"] for r in runs] == [second, first]
    run = marquez.get_job_run(first)
    assert run["state"] == "COMPLETED"
    assert run["jobVersion"]["name"] == "gather_apples"
    assert [d["datasetVersionId"]["name"] for d in run["inputDatasetVersions"]] == ["red.delicious"]


def test_lineage_graph(apples):
    """The route has no client method; Marquez's web UI asks it like this."""
    r = requests.get(
        f"{URL}/api/v1/lineage",
        params={"nodeId": f"job:{apples['kitchen']}:prepare_apple_pie", "depth": 20},
        headers=AUTH,
        timeout=30,
    )
    assert r.status_code == 200, r.text
    nodes = {n["id"]: n for n in r.json()["graph"]}
    pie = nodes[f"job:{apples['kitchen']}:prepare_apple_pie"]
    assert pie["type"] == "JOB"
    assert [e["origin"] for e in pie["inEdges"]] == [f"dataset:{apples['kitchen']}:apple.filling"]
    assert [e["destination"] for e in pie["outEdges"]] == [f"dataset:{apples['kitchen']}:apple.pie"]


@pytest.fixture(scope="module")
def orders():
    """Two catalogued tables whose columns one OpenLineage event connects."""
    tag = uuid.uuid4().hex[:8]
    ns = f"postgres://marquez-{tag}.example.com:5432"
    ds = gql(
        "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
        {"i": {"name": f"marquez-{tag}", "type": "postgresql", "namespaces": [ns]}},
    )["upsertDatastore"]["id"]
    for name in ["orders", "revenue"]:
        gql(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
            {"i": {"datastoreId": ds, "database": "shop", "schema": "public", "name": name,
                   "fields": [{"name": "day", "type": "date"}, {"name": "amount", "type": "numeric"}]}},
        )
    run = str(uuid.uuid4())
    lineage = {
        "_producer": PRODUCER,
        "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
        "fields": {
            "amount": {"inputFields": [{"namespace": ns, "name": "shop.public.orders", "field": "amount",
                                         "transformations": [{"type": "INDIRECT", "subtype": "AGGREGATION",
                                                              "description": "sum(amount)"}]}]},
        },
    }
    for state in ["START", "COMPLETE"]:
        ingest({
            "eventType": state,
            "eventTime": "2024-05-01T10:00:00Z" if state == "START" else "2024-05-01T10:05:00Z",
            "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run},
            "job": {"namespace": f"etl-{tag}", "name": "daily_revenue"},
            "inputs": [{"namespace": ns, "name": "shop.public.orders"}],
            "outputs": [{"namespace": ns, "name": "shop.public.revenue", "facets": {"columnLineage": lineage}}],
        })
    return {"ns": ns, "job_ns": f"etl-{tag}", "run": run}


def test_column_lineage(marquez, orders):
    # The client sends withDownstream=False (Python's spelling).
    graph = marquez.get_column_lineage_by_dataset(orders["ns"], "shop.public.revenue")["graph"]
    by_id = {n["id"]: n for n in graph}
    amount = by_id[f"datasetField:{orders['ns']}:shop.public.revenue:amount"]
    assert amount["type"] == "DATASET_FIELD"
    assert amount["data"]["inputFields"][0]["dataset"] == "shop.public.orders"
    assert amount["data"]["inputFields"][0]["field"] == "amount"
    assert [e["origin"] for e in amount["inEdges"]] == [f"datasetField:{orders['ns']}:shop.public.orders:amount"]
    with_down = marquez.get_column_lineage_by_dataset(orders["ns"], "shop.public.orders", with_downstream=True)
    assert any(n["id"].endswith("shop.public.revenue:amount") for n in with_down["graph"])


def test_catalogued_dataset_and_run(marquez, orders):
    d = marquez.get_dataset(orders["ns"], "shop.public.revenue")
    assert [(f["name"], f["type"]) for f in d["fields"]] == [("day", "date"), ("amount", "numeric")]
    assert d["lastModifiedAt"] == "2024-05-01T10:05:00.000000Z"
    run = marquez.get_job_run(orders["run"])
    assert (run["state"], run["durationMs"]) == ("COMPLETED", 300000)
    assert marquez.get_job(orders["job_ns"], "daily_revenue")["outputs"] == [
        {"namespace": orders["ns"], "name": "shop.public.revenue"}
    ]


def test_events(marquez, orders):
    events = marquez.list_events(limit=5)["events"]
    assert 1 <= len(events) <= 5
    # Newest first by eventTime (Marquez's order), whatever order they were received in.
    times = [datetime.fromisoformat(e["eventTime"].replace("Z", "+00:00")) for e in events]
    assert times == sorted(times, reverse=True), times
    # This module's run, in a window around its eventTimes.
    r = requests.get(f"{URL}/api/v1/events", params={"after": "2024-05-01T10:00:00Z", "before": "2024-05-01T10:05:01Z",
                     "limit": 1000}, headers=AUTH, timeout=30)
    assert r.status_code == 200, r.text
    mine = [e["eventType"] for e in r.json()["events"] if e["run"]["runId"] == orders["run"]]
    assert mine == ["COMPLETE", "START"], mine


def test_writes_are_refused_with_a_pointer_to_ingest():
    r = requests.put(f"{URL}/api/v1/namespaces/anything", json={"ownerName": "me"}, headers=AUTH, timeout=30)
    assert r.status_code == 405
    assert "POST /api/v1/lineage" in r.json()["message"]


def test_a_bad_token_is_refused():
    try:
        with pytest.raises(APIError) as refused:
            MarquezClient(url=URL, api_key="trb_wrong").list_namespaces()
        assert status_of(refused) == 401
    finally:
        # The client keeps its headers in a module-level dict: give the right key back.
        MarquezClient(url=URL, api_key=TOKEN)


# Issue #46: Marquez's answers as Marquez gives them.


@pytest.fixture(scope="module")
def versioned():
    """A catalogued table written by two runs, each with its own schema facet, and tagged."""
    tag = uuid.uuid4().hex[:8]
    ns = f"postgres://versions-{tag}.example.com:5432"
    store = f"versions-{tag}"
    ds = gql(
        "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
        {"i": {"name": store, "type": "postgresql", "namespaces": [ns]}},
    )["upsertDatastore"]["id"]
    gql(
        "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
        {"i": {"datastoreId": ds, "database": "shop", "schema": "public", "name": "sales",
               "fields": [{"name": "amount", "type": "numeric"}], "tags": [f"team-{tag}"]}},
    )
    runs = [str(uuid.uuid4()), str(uuid.uuid4())]
    for i, (run, kind) in enumerate(zip(runs, ["numeric", "bigint"])):
        ingest({
            "eventType": "COMPLETE",
            "eventTime": f"2024-06-0{i + 1}T10:00:00Z",
            "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run},
            "job": {"namespace": f"etl-{tag}", "name": "load_sales"},
            "inputs": [],
            "outputs": [{"namespace": ns, "name": "shop.public.sales", "facets": {"schema": {
                "_producer": PRODUCER,
                "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet",
                "fields": [{"name": "amount", "type": kind}]}}}],
        })
    return {"ns": ns, "store": store, "runs": runs, "tag": f"team-{tag}", "job_ns": f"etl-{tag}"}


def test_namespaces_name_an_owner(marquez, versioned):
    # Marquez names a default owner; its clients read ownerName as a string.
    assert marquez.get_namespace(versioned["job_ns"])["ownerName"] == "anonymous"
    assert all(n["ownerName"] == "anonymous" for n in marquez.list_namespaces(limit=1000)["namespaces"])


def test_sources_are_the_datastores(marquez, versioned):
    names = [s["name"] for s in marquez.list_sources(limit=1000)["sources"]]
    assert versioned["store"] in names
    source = marquez.get_source(versioned["store"])
    assert (source["type"], source["connectionUrl"]) == ("POSTGRESQL", versioned["ns"])
    assert source["updatedAt"] == "2024-06-02T10:00:00.000000Z"


def test_tags_list_the_catalogs(marquez, versioned):
    assert {"name": versioned["tag"], "description": None} in marquez.list_tags(limit=1000)["tags"]


def test_dataset_versions_come_from_the_schema_facets(marquez, versioned):
    listed = marquez.list_dataset_versions(versioned["ns"], "shop.public.sales")
    assert listed["totalCount"] == 2
    latest, first = listed["versions"]
    assert [latest["createdByRun"]["id"], first["createdByRun"]["id"]] == versioned["runs"][::-1]
    assert [(f["name"], f["type"]) for f in latest["fields"]] == [("amount", "bigint")]
    assert [(f["name"], f["type"]) for f in first["fields"]] == [("amount", "numeric")]
    one = marquez.get_dataset_version(versioned["ns"], "shop.public.sales", first["version"])
    assert one["createdAt"] == "2024-06-01T10:00:00.000000Z" and one["fields"] == first["fields"]
    d = marquez.get_dataset(versioned["ns"], "shop.public.sales")
    assert d["createdAt"] and d["updatedAt"] == "2024-06-02T10:00:00.000000Z"
    assert d["currentVersion"] == latest["version"]


def test_an_error_carries_marquez_code_and_message(marquez):
    # marquez-python raises an empty APIError from the HTTPError, whose response is Marquez's
    # body: the status and a message naming what is missing.
    missing = f"no-such-source-{uuid.uuid4().hex[:8]}"
    with pytest.raises(APIError) as caught:
        marquez.get_source(missing)
    response = caught.value.__cause__.response
    assert response.status_code == 404
    body = response.json()
    assert body["code"] == 404 and missing in body["message"], body
    with pytest.raises(APIError) as caught:
        marquez.get_dataset_version("nowhere", "nothing", str(uuid.uuid4()))
    assert caught.value.__cause__.response.json()["code"] == 404


def test_lineage_reaches_jobs_sharing_an_input(apples):
    """Marquez walks to every job that shares a dataset, on either side: from prepare_apple_pie
    at depth 1, the writer of its input (prepare_apple_filling) and so that job's datasets."""
    r = requests.get(
        f"{URL}/api/v1/lineage",
        params={"nodeId": f"job:{apples['kitchen']}:prepare_apple_pie", "depth": 1},
        headers=AUTH,
        timeout=30,
    )
    assert r.status_code == 200, r.text
    ids = {n["id"] for n in r.json()["graph"]}
    assert f"job:{apples['kitchen']}:prepare_apple_filling" in ids
    assert f"dataset:{apples['kitchen']}:apples" in ids, "the found job's inputs are nodes"
    assert f"job:{apples['kitchen']}:gather_apples" not in ids, "two steps away"


def test_events_are_windowed_by_event_time(apples):
    r = requests.get(
        f"{URL}/api/v1/events/lineage",
        params={"after": "2020-09-01T00:00:00Z", "before": "2020-10-01T00:00:00Z", "sortDirection": "asc", "limit": 1000},
        headers=AUTH,
        timeout=30,
    )
    assert r.status_code == 200, r.text
    times = [e["eventTime"] for e in r.json()["events"] if e["job"]["namespace"] == apples["kitchen"]]
    # 2_apple_filling, 6_apple_pie, 3_apple_cider: received in another order.
    assert times == ["2020-09-02T15:00:00.000+10:00", "2020-09-03T15:00:00.000+10:00", "2020-09-29T12:00:00.000+10:00"]
