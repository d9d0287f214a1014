"""The Python client (clients/python, `import tributary`) against a running Tributary
(TRIBUTARY_URL, with the ADMIN token TRIBUTARY_TOKEN): tables named as people name them, the
answers as networkx graphs and pandas DataFrames, the service's errors as exceptions with their
code, and examples/impact.ipynb executed cell by cell with nbclient.

Run by scripts/test against each store. The same serve runs every Python test of a store (and
the Neo4j database is shared), so each test's datastore, namespace, database and job namespace
are unique to it.
"""

import os
import subprocess
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import networkx as nx
import pandas as pd
import pytest
import requests

import tributary
from tributary import (
    AmbiguousNameError,
    BadInputError,
    ForbiddenError,
    NotFoundError,
    Tributary,
    TributaryError,
    UnauthenticatedError,
)

URL = os.environ.get("TRIBUTARY_URL", "http://127.0.0.1:8080")
TOKEN = os.environ.get("TRIBUTARY_TOKEN", "test-token")
ROOT = Path(__file__).resolve().parents[2]
PRODUCER = "https://github.com/your-org/tributary-client-tests"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"


@pytest.fixture
def tb():
    return Tributary(URL, TOKEN)


class Shop:
    """A warehouse of its own: datastore `name` listing namespace `ns`, tables under database
    `db`, jobs in namespace `jobs`; `ids` maps `schema.table` to container ids."""

    def __init__(self, tb):
        self.tb = tb
        tag = uuid.uuid4().hex[:8]
        self.name = f"pyclient-{tag}"
        self.ns = f"postgres://pyclient-{tag}.example.com:5432"
        self.db = f"shop{tag}"
        self.jobs = f"nightly-{tag}"
        self.ds = tb.query(
            "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
            {"i": {"name": self.name, "type": "postgresql", "namespaces": [self.ns]}},
        )["upsertDatastore"]["id"]
        self.ids = {}
        for qualified, columns in {
            "raw.orders": ["id", "customer_email", "amount"],
            "staging.orders_clean": ["order_id", "email", "amount"],
            "mart.revenue_daily": ["day", "revenue"],
            "mart.customers": ["email", "lifetime_value"],
        }.items():
            self.ids[qualified] = self.table(qualified, columns)

    def table(self, qualified, columns, datastore=None):
        schema, name = qualified.split(".")
        return self.tb.query(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
            {"i": {"datastoreId": datastore or self.ds, "database": self.db, "schema": schema, "name": name,
                   "fields": [{"name": c} for c in columns]}},
        )["upsertContainer"]["id"]

    def q(self, qualified):
        return f"{self.db}.{qualified}"

    def dataset(self, qualified, columns=None, ns=None):
        d = {"namespace": ns or self.ns, "name": qualified if ns else self.q(qualified)}
        if columns:
            d["facets"] = {"columnLineage": {
                "_producer": PRODUCER,
                "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json",
                "fields": {out: {"inputFields": [{"namespace": self.ns, "name": self.q(t), "field": c,
                                                  "transformations": [{"type": "DIRECT", "subtype": sub}]}]}
                           for out, (t, c, sub) in columns.items()},
            }}
        return d

    def send(self, job, state, inputs, outputs, run_id=None, error=None):
        run = {"runId": run_id or str(uuid.uuid4())}
        if error:
            run["facets"] = {"errorMessage": {
                "_producer": PRODUCER,
                "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json",
                "message": error, "programmingLanguage": "python"}}
        event = {"eventType": state, "eventTime": datetime.now(timezone.utc).isoformat(), "producer": PRODUCER,
                 "schemaURL": SCHEMA_URL, "run": run, "job": {"namespace": self.jobs, "name": job},
                 "inputs": inputs, "outputs": outputs}
        r = requests.post(f"{URL}/api/v1/lineage", json=[event], headers={"Authorization": f"Bearer {TOKEN}"},
                          timeout=60)
        assert r.status_code == 201, r.text
        assert r.json()["events"][0]["status"] in ("applied", "recorded", "ignored"), r.text
        return run["runId"]

    def load(self):
        """orders -> orders_clean (load_orders_clean) -> revenue_daily, customers."""
        self.send("load_orders_clean", "COMPLETE", [self.dataset("raw.orders")],
                  [self.dataset("staging.orders_clean", {
                      "order_id": ("raw.orders", "id", "IDENTITY"),
                      "email": ("raw.orders", "customer_email", "IDENTITY"),
                      "amount": ("raw.orders", "amount", "IDENTITY")})])
        self.send("revenue_daily", "COMPLETE", [self.dataset("staging.orders_clean")],
                  [self.dataset("mart.revenue_daily", {"revenue": ("staging.orders_clean", "amount", "AGGREGATION")})])
        self.send("customers", "COMPLETE", [self.dataset("staging.orders_clean")],
                  [self.dataset("mart.customers", {
                      "email": ("staging.orders_clean", "email", "IDENTITY"),
                      "lifetime_value": ("staging.orders_clean", "amount", "AGGREGATION")})])
        return self


@pytest.fixture
def shop(tb):
    return Shop(tb).load()


def test_tables_are_named_as_people_name_them(tb, shop):
    orders = shop.ids["raw.orders"]
    by_id = tb.resolve(orders)
    assert (by_id.kind, by_id.id, by_id.name, by_id.datastore) == ("container", orders, shop.q("raw.orders"), shop.name)
    assert tb.resolve(shop.q("raw.orders")) == by_id
    assert tb.resolve(shop.q("RAW.Orders")) == by_id                        # case does not matter
    assert tb.resolve(f"{shop.name}:{shop.q('raw.orders')}") == by_id      # datastore:name
    assert tb.resolve(f"{shop.name}:raw.orders") == by_id                  # any unambiguous end
    assert tb.resolve((shop.ns, shop.q("raw.orders"))) == by_id            # OpenLineage namespace and name
    # A table name only this test has resolves by its bare name.
    lone = f"lone_{uuid.uuid4().hex[:8]}"
    lone_id = shop.table(f"raw.{lone}", ["x"])
    assert tb.resolve(lone).id == lone_id


def test_ambiguous_and_unknown_names_raise_with_the_candidates(tb, shop):
    other = tb.query(
        "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
        {"i": {"name": f"{shop.name}-replica", "type": "postgresql"}},
    )["upsertDatastore"]["id"]
    twin = shop.table("raw.orders", ["id"], datastore=other)
    with pytest.raises(AmbiguousNameError) as e:
        tb.resolve(shop.q("raw.orders"))
    assert e.value.code == "BAD_USER_INPUT" and isinstance(e.value, BadInputError)
    assert e.value.candidates == [
        f"{shop.q('raw.orders')} in datastore {shop.name} (container {shop.ids['raw.orders']})",
        f"{shop.q('raw.orders')} in datastore {shop.name}-replica (container {twin})",
    ]
    assert "give more of the qualified name" in str(e.value)
    # Naming the datastore settles it (the longer datastore name is tried first).
    assert tb.resolve(f"{shop.name}:{shop.q('raw.orders')}").id == shop.ids["raw.orders"]
    assert tb.resolve(f"{shop.name}-replica:{shop.q('raw.orders')}").id == twin
    with pytest.raises(NotFoundError) as e:
        tb.resolve(shop.q("raw.nowhere"))
    assert e.value.code == "NOT_FOUND" and "not found" in e.value.message
    with pytest.raises(NotFoundError) as e:
        tb.resolve(f"{shop.name}:{shop.q('raw.nowhere')}")
    assert f"in datastore '{shop.name}'" in e.value.message
    with pytest.raises(NotFoundError) as e:
        tb.resolve(f"no-such-store-{uuid.uuid4().hex[:6]}:orders_x")
    assert "no datastore is named" in e.value.message
    with pytest.raises(NotFoundError):
        tb.resolve((shop.ns, shop.q("raw.nowhere")))
    with pytest.raises(NotFoundError) as e:
        tb.resolve(999_999_999)
    assert e.value.code == "NOT_FOUND"


def test_lineage_is_a_networkx_graph_with_the_answers_attributes(tb, shop):
    clean = shop.ids["staging.orders_clean"]
    g = tb.lineage(shop.q("staging.orders_clean"))
    assert isinstance(g, nx.DiGraph)
    assert set(g.nodes) == {shop.ids[t] for t in ("raw.orders", "staging.orders_clean", "mart.revenue_daily",
                                                   "mart.customers")}
    assert set(g.edges) == {(shop.ids["raw.orders"], clean), (clean, shop.ids["mart.revenue_daily"]),
                            (clean, shop.ids["mart.customers"])}
    node = g.nodes[clean]
    assert node["kind"] == "container" and node["is_target"] is True
    assert node["label"] == shop.q("staging.orders_clean") and node["datastore"] == shop.name
    assert node["field_count"] == 3
    edge = g.edges[shop.ids["raw.orders"], clean]
    assert (edge["kind"], edge["source_type"], edge["operation"]) == ("lineage", "openlineage", "run_event")
    assert g.graph["root"] == clean and g.graph["is_partial"] is False and g.graph["as_of"] is None
    # One side, and one step.
    up = tb.lineage(clean, depth=1, side="upstream")
    assert set(up.nodes) == {shop.ids["raw.orders"], clean}
    # Jobs between the tables: dataset -> job -> dataset.
    gj = tb.lineage(clean, include_jobs=True, health=True)
    jobs = {d["name"]: n for n, d in gj.nodes(data=True) if d["kind"] == "job"}
    assert set(jobs) == {"load_orders_clean", "revenue_daily", "customers"}
    load = jobs["load_orders_clean"]
    assert gj.nodes[load]["namespace"] == shop.jobs and gj.nodes[load]["state"] == "COMPLETE"
    assert gj.edges[shop.ids["raw.orders"], load]["kind"] == "input"
    assert gj.edges[load, clean]["kind"] == "output"
    assert gj.nodes[clean]["health"] == "FRESH" and gj.nodes[shop.ids["raw.orders"]]["health"] == "UNKNOWN"


def test_as_of_and_diff_see_what_changed(tb, shop):
    revenue = shop.ids["mart.revenue_daily"]
    time.sleep(0.05)
    before = datetime.now(timezone.utc)
    time.sleep(0.05)
    bucket = f"s3://pyclient-{uuid.uuid4().hex[:8]}"
    shop.send("export_revenue", "COMPLETE", [shop.dataset("mart.revenue_daily")],
              [shop.dataset("revenue/daily.parquet", ns=bucket)])
    now = tb.lineage(revenue, depth=1, side="downstream")
    ext = f"ext:openlineage:{bucket}/revenue/daily.parquet"
    assert now.nodes[ext]["kind"] == "external" and (revenue, ext) in now.edges
    then = tb.lineage(revenue, depth=1, side="downstream", as_of=before)
    assert ext not in then.nodes and then.graph["as_of"]["at"]
    # The external asset is a table reference too, by its OpenLineage name or its id.
    node = tb.resolve((bucket, "revenue/daily.parquet"))
    assert (node.kind, node.id) == ("external", ext)
    assert set(tb.lineage(node, side="upstream").nodes) >= {ext, revenue}
    # impact lists the asset beside the tables (health is a table's only).
    orders_impact = tb.impact(shop.ids["raw.orders"])
    last = orders_impact.iloc[-1]
    assert (last["id"], last["name"], last["kind"], last["distance"], last["via"]) == (
        ext, f"{bucket}/revenue/daily.parquet", "external", 3, shop.q("mart.revenue_daily"))
    assert pd.isna(last["health"]) and pd.isna(last["datastore"])
    assert list(orders_impact["kind"]) == ["container"] * 3 + ["external"]
    assert list(tb.impact(shop.ids["raw.orders"], as_of=before)["kind"]) == ["container"] * 3
    d = tb.diff(revenue, since=before)
    assert isinstance(d, pd.DataFrame)
    appeared = d[d["change"] == "edge appeared"]
    assert list(zip(appeared["source"], appeared["target"], appeared["job"])) == [
        (shop.q("mart.revenue_daily"), ext, f"{shop.jobs}/export_revenue")]
    assert appeared["at"].iloc[0] >= pd.Timestamp(before)
    assert d.attrs["since"] and d.attrs["root"] == f"{shop.name}:{shop.q('mart.revenue_daily')}"


def test_impact_and_pii_flow_are_dataframes_one_row_per_asset(tb, shop):
    impact = tb.impact(f"{shop.name}:{shop.q('raw.orders')}")
    assert list(impact.columns[:5]) == ["id", "name", "datastore", "distance", "via"]
    assert "health" in impact.columns
    rows = sorted(zip(impact["name"], impact["distance"], impact["via"], impact["health"]))
    assert rows == [
        (shop.q("mart.customers"), 2, shop.q("staging.orders_clean"), "FRESH"),
        (shop.q("mart.revenue_daily"), 2, shop.q("staging.orders_clean"), "FRESH"),
        (shop.q("staging.orders_clean"), 1, shop.q("raw.orders"), "FRESH"),
    ]
    assert set(impact["datastore"]) == {shop.name} and impact.attrs["is_partial"] is False
    assert tb.impact(shop.ids["raw.orders"], depth=1).attrs["is_partial"] is True
    up = tb.impact(shop.ids["mart.customers"], side="upstream")
    assert list(zip(up["name"], up["via"])) == [
        (shop.q("staging.orders_clean"), shop.q("mart.customers")),
        (shop.q("raw.orders"), shop.q("staging.orders_clean")),
    ]
    flow = tb.pii_flow(shop.q("raw.orders"), "CUSTOMER_EMAIL")
    assert sorted(zip(flow["name"], flow["column"], flow["distance"], flow["derived"], flow["via"])) == [
        (shop.q("mart.customers"), "email", 2, False, f"{shop.q('staging.orders_clean')}.email"),
        (shop.q("staging.orders_clean"), "email", 1, False, f"{shop.q('raw.orders')}.customer_email"),
    ]
    amount = tb.pii_flow(shop.q("raw.orders"), "amount")
    derived = dict(zip(amount["name"] + "." + amount["column"], amount["derived"]))
    assert derived == {f"{shop.q('staging.orders_clean')}.amount": False,
                       f"{shop.q('mart.revenue_daily')}.revenue": True,
                       f"{shop.q('mart.customers')}.lifetime_value": True}
    with pytest.raises(NotFoundError) as e:
        tb.pii_flow(shop.q("raw.orders"), "no_such_column")
    assert "no_such_column" in e.value.message


def test_a_failed_run_shows_in_incidents_runs_jobs_and_health(tb, shop):
    # Further down: revenue_daily -> revenue_weekly (a job) -> board (an edge no job wrote)
    # -> board_summary (a job): STALE reaches 4 hops below the failed table, through the edge.
    for qualified in ("mart.revenue_weekly", "mart.board", "mart.board_summary"):
        shop.ids[qualified] = shop.table(qualified, ["day", "revenue"])
    shop.send("revenue_weekly", "COMPLETE", [shop.dataset("mart.revenue_daily")], [shop.dataset("mart.revenue_weekly")])
    tb.query("mutation($s: Int, $t: Int) { createEdge(input: {sourceContainerId: $s, targetContainerId: $t}) { id } }",
             {"s": shop.ids["mart.revenue_weekly"], "t": shop.ids["mart.board"]})
    shop.send("board_summary", "COMPLETE", [shop.dataset("mart.board")], [shop.dataset("mart.board_summary")])
    since = datetime.now(timezone.utc) - timedelta(seconds=1)
    run = str(uuid.uuid4())
    shop.send("load_orders_clean", "START", [shop.dataset("raw.orders")], [shop.dataset("staging.orders_clean")], run)
    shop.send("load_orders_clean", "FAIL", [shop.dataset("raw.orders")], [shop.dataset("staging.orders_clean")], run,
              error="permission denied for relation orders")
    incidents = tb.incidents(since=since)
    mine = incidents[incidents["job"] == f"{shop.jobs}/load_orders_clean"]
    assert list(zip(mine["run_id"], mine["state"], mine["error_message"], mine["failed_count"],
                    mine["stale_count"])) == [(run, "FAIL", "permission denied for relation orders", 1, 5)]
    impact = tb.impact(shop.ids["raw.orders"])
    assert sorted(zip(impact["name"], impact["distance"], impact["health"])) == sorted([
        (shop.q("staging.orders_clean"), 1, "FAILED"), (shop.q("mart.revenue_daily"), 2, "STALE"),
        (shop.q("mart.customers"), 2, "STALE"), (shop.q("mart.revenue_weekly"), 3, "STALE"),
        (shop.q("mart.board"), 4, "STALE"), (shop.q("mart.board_summary"), 5, "STALE")])
    runs = tb.runs(f"{shop.jobs}/load_orders_clean")
    assert list(runs["state"]) == ["FAIL", "COMPLETE"] and runs["run_id"].iloc[0] == run
    assert runs["error_message"].iloc[0] == "permission denied for relation orders"
    assert isinstance(runs["started_at"].iloc[0], pd.Timestamp)
    assert list(tb.runs((shop.jobs, "load_orders_clean"), state="FAIL")["run_id"]) == [run]
    jobs = tb.jobs(namespace=shop.jobs)
    assert dict(zip(jobs["name"], jobs["state"])) == {
        "load_orders_clean": "FAIL", "revenue_daily": "COMPLETE", "customers": "COMPLETE",
        "revenue_weekly": "COMPLETE", "board_summary": "COMPLETE"}
    assert list(tb.jobs(namespace=shop.jobs, last_run_state="fail")["name"]) == ["load_orders_clean"]
    assert set(tb.jobs(datastore=shop.name)["name"]) == {
        "load_orders_clean", "revenue_daily", "customers", "revenue_weekly", "board_summary"}
    job = tb.job(jobs["id"].iloc[0])
    assert job["namespace"] == shop.jobs
    with pytest.raises(NotFoundError):
        tb.runs(f"{shop.jobs}/no_such_job")
    # The job runs again and completes: nothing below it is failed or stale any more (board is
    # written by no job: UNKNOWN), and the incident is gone.
    shop.send("load_orders_clean", "COMPLETE", [shop.dataset("raw.orders")], [shop.dataset("staging.orders_clean")])
    impact = tb.impact(shop.ids["raw.orders"])
    assert dict(zip(impact["name"], impact["health"])) == {
        shop.q(t): "FRESH" for t in ("staging.orders_clean", "mart.revenue_daily", "mart.customers",
                                     "mart.revenue_weekly", "mart.board_summary")} | {shop.q("mart.board"): "UNKNOWN"}
    incidents = tb.incidents(since=since)
    assert list(incidents[incidents["job"] == f"{shop.jobs}/load_orders_clean"]["run_id"]) == []


def test_records_are_read_many_at_a_time_within_the_alias_cap(tb, shop):
    """Names for a long impact or flow come in requests of at most 50 aliases (the cap)."""
    ids = list(range(1, max(max(shop.ids.values()), 120) + 1)) + [999_999_999]   # unknown ids are left out
    found = tb._containers(ids)
    assert {shop.ids[t] for t in shop.ids} <= set(found)
    assert 999_999_999 not in found
    assert found[shop.ids["raw.orders"]]["name"] == "orders"


def test_explain_names_the_path_and_who_asserted_each_hop(tb, shop):
    why = tb.explain(shop.q("raw.orders"), shop.ids["mart.revenue_daily"])
    assert why.paths == [[shop.q("raw.orders"), shop.q("staging.orders_clean"), shop.q("mart.revenue_daily")]]
    assert why.reason is None and why.is_partial is False
    assert list(why.hops["job"]) == [f"{shop.jobs}/load_orders_clean", f"{shop.jobs}/revenue_daily"]
    none = tb.explain(shop.ids["mart.revenue_daily"], shop.ids["raw.orders"])
    assert none.paths == [] and none.reason == "NO_CONNECTION" and none.hops.empty


def test_changes_iterates_the_feed_across_pages(tb, shop):
    orders = shop.ids["raw.orders"]
    feed = list(tb.changes(table=orders, page_size=1))
    assert [c.kind for c in feed if c.edge_id] == ["EDGE_ASSERTED"] * len([c for c in feed if c.edge_id])
    assert len({c.cursor for c in feed}) == len(feed) >= 2            # the container, its edge
    assert all(orders in c.container_ids for c in feed)
    assert all(isinstance(c.at, datetime) for c in feed)
    # Reading on after a cursor gives what follows it; an instant skips what came before it.
    assert [c.cursor for c in tb.changes(feed[0].cursor, table=orders)] == [c.cursor for c in feed[1:]]
    assert [c.cursor for c in tb.changes(feed[-1].at, table=orders)][-1] == feed[-1].cursor
    assert list(tb.changes(datetime.now(timezone.utc) + timedelta(hours=1), table=orders)) == []
    with pytest.raises(BadInputError) as e:
        next(tb.changes("oops"))
    assert e.value.code == "BAD_USER_INPUT" and "is not a change cursor" in e.value.message


def test_changes_can_follow_the_feed_as_it_grows(tb, shop):
    """With follow=True the iterator waits at the end of the log for the next change, and yields
    only the changes that touch its table: a change elsewhere, sent between two of the table's,
    never arrives; the second of the table's (the sentinel) shows when it would have."""
    orders = shop.ids["raw.orders"]
    customers, revenue = shop.ids["mart.customers"], shop.ids["mart.revenue_daily"]
    head = list(tb.changes(table=orders))[-1].cursor
    got = []
    first = threading.Event()

    def read():
        for change in tb.changes(head, table=orders, follow=True, poll_interval=0.1):
            got.append(change)
            first.set()
            if len(got) == 2:
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    shop.send("orders_to_customers", "COMPLETE", [shop.dataset("raw.orders")], [shop.dataset("mart.customers")])
    assert first.wait(timeout=30), "the follower never saw the first change"
    # The follower has read past the end of the log: what comes now arrives by its polling.
    shop.send("revenue_to_customers", "COMPLETE", [shop.dataset("mart.revenue_daily")], [shop.dataset("mart.customers")])
    shop.send("orders_to_revenue", "COMPLETE", [shop.dataset("raw.orders")], [shop.dataset("mart.revenue_daily")])
    reader.join(timeout=30)
    assert not reader.is_alive(), f"the sentinel never arrived: {got}"
    assert [(c.kind, c.container_ids) for c in got] == [
        ("EDGE_ASSERTED", [orders, customers]),      # the first change of the table
        ("EDGE_ASSERTED", [orders, revenue]),        # the sentinel: revenue -> customers never came
    ]


def test_errors_carry_the_services_code_and_message(tb, shop):
    with pytest.raises(BadInputError) as e:
        tb.lineage(shop.ids["raw.orders"], depth=0)
    assert e.value.code == "BAD_USER_INPUT" and "depth" in e.value.message and e.value.path == ["r"]
    with pytest.raises(BadInputError) as e:
        tb.lineage(shop.ids["raw.orders"], as_of="2000-01-01T00:00:00Z")
    assert "before anything was recorded" in e.value.message
    with pytest.raises(NotFoundError) as e:
        tb.query("{ lineageGraph(containerId: 999999999) { nodes { id } } }")
    assert e.value.code == "NOT_FOUND" and e.value.message == "Container 999999999 not found"
    with pytest.raises(UnauthenticatedError) as e:
        Tributary(URL, "trb_" + "0" * 64).impact(shop.ids["raw.orders"])
    assert e.value.code == "UNAUTHENTICATED"
    with pytest.raises(UnauthenticatedError):
        Tributary(URL).datastores()
    # Every one is a TributaryError; a code without its own class is one too.
    with pytest.raises(TributaryError) as e:
        tb.query("mutation($i: CreateEdgeInput!) { createEdge(input: $i) { id } }",
                 {"i": {"sourceContainerId": shop.ids["raw.orders"], "targetContainerId": shop.ids["raw.orders"]}})
    assert e.value.code and e.value.message
    with pytest.raises(BadInputError):
        tb.impact(shop.ids["raw.orders"], side="sideways")


def test_forbidden_is_its_own_class(tmp_path):
    """A MEMBER token on a serve of its own: registering a datastore needs an ADMIN."""
    from test_zero_setup import Serve, stores

    serve = Serve(stores()[0], tmp_path)
    try:
        store_args = ["--neo4j-uri", os.environ["NEO4J_URI"] if stores()[0] == "neo4j" else ""]
        member = subprocess.run(
            [serve.bin, "token", "create", "--user", f"member-{uuid.uuid4().hex[:6]}", "--role", "MEMBER",
             "--data-dir", str(tmp_path / "data"), *store_args],
            check=True, capture_output=True, text=True,
        ).stdout.strip().splitlines()[-1]
        with pytest.raises(ForbiddenError) as e:
            Tributary(serve.url, member).query(
                'mutation { upsertDatastore(input: {name: "nope", type: "postgresql"}) { id } }')
        assert e.value.code == "FORBIDDEN" and "ADMIN" in e.value.message
    finally:
        serve.stop()


def test_the_impact_notebook_runs_without_a_cell_error(monkeypatch, tmp_path):
    """examples/impact.ipynb, executed as Jupyter would, against this serve."""
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("TRIBUTARY_URL", URL)
    monkeypatch.setenv("TRIBUTARY_TOKEN", TOKEN)
    # This venv's own python3 kernel (ipykernel), not one a user's Jupyter directory may name.
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("MPLBACKEND", raising=False)      # the kernel's inline backend draws
    path = ROOT / "examples" / "impact.ipynb"
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    # Raises CellExecutionError, naming the cell and its traceback, on any error.
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 2        # both drawings
    text = "".join(o.get("data", {}).get("text/plain", "") + o.get("text", "") for o in outputs)
    assert "STALE" in text and "FAILED" in text and "load_orders_clean" in text


def test_the_package_is_typed_and_versioned():
    assert tributary.__version__
    assert (Path(tributary.__file__).parent / "py.typed").exists()
