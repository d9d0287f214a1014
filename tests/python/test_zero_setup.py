"""A new user's first look (issue 20): a fresh `tributary serve --openlineage-zero-setup` with
nothing registered, the stock openlineage-python client sending a Spark-style and an
Airflow-style sequence, then `lineageGraph` on an output looked up by namespace and name.

Starts its own serve: the binary is TRIBUTARY_BIN, else $CARGO_TARGET_DIR/debug/tributary. The
store is the one scripts/test names in TRIBUTARY_CLIENT_STORE (`embedded` or `neo4j`); run by
hand, embedded and, when NEO4J_URI is set, Neo4j too. The Neo4j database is shared with the
other client tests of the run, so every namespace and name here is unique to the test.
"""

import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    parent_run,
    schema_dataset,
    symlinks_dataset,
)
from openlineage.client.transport.http import ApiKeyTokenProvider, HttpConfig, HttpTransport


def binary():
    if os.environ.get("TRIBUTARY_BIN"):
        return os.environ["TRIBUTARY_BIN"]
    target = os.environ.get("CARGO_TARGET_DIR") or str(Path(__file__).resolve().parents[2] / "target")
    return str(Path(target) / "debug" / "tributary")


def stores():
    named = os.environ.get("TRIBUTARY_CLIENT_STORE")
    if named:
        return [named]
    return ["embedded"] + (["neo4j"] if os.environ.get("NEO4J_URI") else [])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    """`tributary serve --openlineage-zero-setup` on a free port, with an admin token (and the
    `extra` flags: test_pushback.py serves with a small ingest limit)."""

    def __init__(self, store, tmp, extra=()):
        self.bin = binary()
        store_args = ["--neo4j-uri", os.environ["NEO4J_URI"] if store == "neo4j" else ""]
        data = str(Path(tmp) / "data")
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log = open(Path(tmp) / "serve.log", "w")
        self.proc = subprocess.Popen(
            [self.bin, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data, "--openlineage-zero-setup",
             *store_args, *extra],
            stdout=self.log, stderr=subprocess.STDOUT,
        )
        for _ in range(150):
            try:
                urllib.request.urlopen(f"{self.url}/readyz")
                # Now that serve has created the store (`token create` refuses a data dir
                # with none).
                self.token = subprocess.run(
                    [self.bin, "token", "create", "--user", "zero-setup", "--role", "ADMIN", "--data-dir", data,
                     *store_args],
                    check=True, capture_output=True, text=True,
                ).stdout.strip().splitlines()[-1]
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("serve did not start: " + (Path(tmp) / "serve.log").read_text()[-2000:])

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()

    def gql(self, query, variables=None):
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        req = urllib.request.Request(
            f"{self.url}/graphql", data=body,
            headers={"content-type": "application/json", "authorization": f"Bearer {self.token}"},
        )
        with urllib.request.urlopen(req) as r:
            out = json.load(r)
        assert not out.get("errors"), out
        return out["data"]

    def client(self):
        config = HttpConfig(url=self.url, auth=ApiKeyTokenProvider({"apiKey": self.token}))
        return OpenLineageClient(transport=HttpTransport(config))


@pytest.fixture(params=stores())
def serve(request):
    with tempfile.TemporaryDirectory() as tmp:
        s = Serve(request.param, tmp)
        try:
            yield s
        finally:
            s.stop()


def now():
    return datetime.now(timezone.utc).isoformat()


def schema(*names):
    return schema_dataset.SchemaDatasetFacet(
        fields=[schema_dataset.SchemaDatasetFacetFields(name=n, type="string") for n in names]
    )


def parent(namespace, name, run_id):
    return parent_run.ParentRunFacet(
        run=parent_run.Run(runId=run_id), job=parent_run.Job(namespace=namespace, name=name)
    )


SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.19.0/integration/spark"
AIRFLOW = "https://github.com/apache/airflow/tree/providers-openlineage/2.1.0"


def event(state, run_id, namespace, job, inputs=(), outputs=(), run_facets=None):
    producer = AIRFLOW if namespace.startswith("airflow-") else SPARK
    return RunEvent(
        eventType=state, eventTime=now(), run=Run(runId=run_id, facets=run_facets or {}),
        job=Job(namespace=namespace, name=job), producer=producer, inputs=list(inputs), outputs=list(outputs),
    )


def spark_sequence(tag):
    """A Spark CTAS as the Spark integration reports it: an application run with no datasets,
    the action's START and COMPLETE as its child, datasets named by their warehouse path with a
    TABLE symlink, and column lineage whose input fields name the inputs by path."""
    ns = f"file:/tmp/warehouse-{tag}"
    app_run, action_run = str(uuid.uuid4()), str(uuid.uuid4())
    job_ns, app = f"spark-{tag}", "cll_test"

    def ds(cls, table, fields, facets=None):
        return cls(namespace=ns, name=f"/tmp/warehouse-{tag}/{table}", facets={
            "schema": schema(*fields),
            "symlinks": symlinks_dataset.SymlinksDatasetFacet(
                identifiers=[symlinks_dataset.Identifier(namespace=ns, name=f"default.{table}", type="TABLE")]
            ),
            **(facets or {}),
        })

    def field(table, name, subtype):
        return column_lineage_dataset.InputField(
            namespace=ns, name=f"/tmp/warehouse-{tag}/{table}", field=name,
            transformations=[column_lineage_dataset.Transformation(type="DIRECT", subtype=subtype)],
        )

    cll = column_lineage_dataset.ColumnLineageDatasetFacet(fields={
        "ident": column_lineage_dataset.Fields(inputFields=[field("src1", "a", "IDENTITY")]),
        "agg": column_lineage_dataset.Fields(inputFields=[field("src1", "b", "AGGREGATION"), field("src2", "c", "AGGREGATION")]),
    })
    inputs = [ds(InputDataset, "src1", ["a", "b"]), ds(InputDataset, "src2", ["c"])]
    outputs = [ds(OutputDataset, "out", ["ident", "agg"], {"columnLineage": cll})]
    action = f"{app}.execute_create_data_source_table_as_select_command.default_out"
    child = {"parent": parent(job_ns, app, app_run)}
    return ns, [
        event(RunState.START, app_run, job_ns, app),
        event(RunState.START, action_run, job_ns, action, inputs, outputs, child),
        event(RunState.COMPLETE, action_run, job_ns, action, inputs, outputs, child),
        event(RunState.COMPLETE, app_run, job_ns, app),
    ]


def airflow_sequence(tag):
    """Two tasks of an Airflow DAG run as the provider reports them: each task run the child of
    the DAG run, BigQuery tables by `project.dataset.table`, a GCS export, and column lineage in
    the older per-field form (`transformationType`)."""
    project = f"proj-{tag}"
    dag_ns, dag = f"airflow-{tag}", "daily_orders"
    dag_run = str(uuid.uuid4())
    child = {"parent": parent(dag_ns, dag, dag_run)}
    orders = f"{project}.raw.orders"
    daily = f"{project}.mart.daily"
    cll = column_lineage_dataset.ColumnLineageDatasetFacet(fields={
        "order_id": column_lineage_dataset.Fields(
            inputFields=[column_lineage_dataset.InputField(namespace="bigquery", name=orders, field="id")],
            transformationType="IDENTITY", transformationDescription="identical",
        ),
        "total": column_lineage_dataset.Fields(
            inputFields=[column_lineage_dataset.InputField(namespace="bigquery", name=orders, field="amount")],
            transformationType="TRANSFORMED", transformationDescription="SUM(amount)",
        ),
    })
    build = [InputDataset(namespace="bigquery", name=orders, facets={"schema": schema("id", "amount")})], [
        OutputDataset(namespace="bigquery", name=daily, facets={"schema": schema("order_id", "total"), "columnLineage": cll})
    ]
    export = [InputDataset(namespace="bigquery", name=daily)], [
        OutputDataset(namespace=f"gs://exports-{tag}", name="daily/orders.csv")
    ]
    events = [event(RunState.START, dag_run, dag_ns, dag)]
    for task, (inputs, outputs) in [("build_daily", build), ("export_daily", export)]:
        run = str(uuid.uuid4())
        for state in (RunState.START, RunState.COMPLETE):
            events.append(event(state, run, dag_ns, f"{dag}.{task}", inputs, outputs, child))
    events.append(event(RunState.COMPLETE, dag_run, dag_ns, dag))
    return project, events


GRAPH = """query($id: Int!) { lineageGraph(containerId: $id, depth: 3) {
  nodes { name isTarget }
  edges { sourceContainer { name } targetContainer { name } evidence { details } } } }"""


def graph(serve, namespace, name):
    node = serve.gql(
        "query($ns: String!, $name: String!) { node(namespace: $ns, name: $name) { kind containerId } }",
        {"ns": namespace, "name": name},
    )["node"]
    assert node and node["kind"] == "container", node
    g = serve.gql(GRAPH, {"id": node["containerId"]})["lineageGraph"]
    nodes = sorted((n["name"], n["isTarget"]) for n in g["nodes"])
    edges = sorted((e["sourceContainer"]["name"], e["targetContainer"]["name"]) for e in g["edges"])
    return node["containerId"], nodes, edges, g["edges"]


def field_edges(serve, container_id):
    """Field edges into the container's fields: (source field, target field) to `derived`."""
    fields = serve.gql(
        "query($id: Int!) { containerFields(containerId: $id) { items { id name } } }", {"id": container_id}
    )["containerFields"]["items"]
    out = {}
    for f in fields:
        conn = serve.gql(
            "query($id: Int!) { fieldConnections(fieldId: $id) { edges { targetFieldId derived sourceField { name } } } }",
            {"id": f["id"]},
        )["fieldConnections"]["edges"]
        for e in conn:
            if e["targetFieldId"] == f["id"]:
                out[(e["sourceField"]["name"], f["name"])] = e["derived"]
    return out


def test_a_new_user_sees_the_graph_of_spark_and_airflow_events(serve):
    tag = uuid.uuid4().hex[:10]
    client = serve.client()
    spark_ns, spark = spark_sequence(tag)
    project, airflow = airflow_sequence(tag)
    for e in spark + airflow:
        client.emit(e)

    # Spark: the output found by its table name; its graph is the CTAS's two sources.
    out_id, nodes, edges, raw = graph(serve, spark_ns, "default.out")
    assert nodes == [("out", True), ("src1", False), ("src2", False)]
    assert edges == [("src1", "out"), ("src2", "out")]
    # The action's run is recorded with its parent, the application's run.
    details = [ev["details"] for e in raw for ev in e["evidence"]]
    assert details and all(d["parent"]["job"] == {"namespace": f"spark-{tag}", "name": "cll_test"} for d in details), details
    # Column lineage through the paths' TABLE symlinks; only the IDENTITY copy is not derived.
    assert field_edges(serve, out_id) == {("a", "ident"): False, ("b", "agg"): True, ("c", "agg"): True}

    # Airflow: the mart table found by its BigQuery name; the raw table feeds it, it feeds the export.
    daily_id, nodes, edges, _ = graph(serve, "bigquery", f"{project}.mart.daily")
    assert nodes == [("daily", True), ("daily/orders.csv", False), ("orders", False)]
    assert edges == [("daily", "daily/orders.csv"), ("orders", "daily")]
    # The older per-field form: IDENTITY is not derived, TRANSFORMED is.
    assert field_edges(serve, daily_id) == {("id", "order_id"): False, ("amount", "total"): True}
    # Every namespace got a datastore of its own, typed by its scheme.
    types = {d["namespaces"][0]: d["type"] for d in serve.gql("{ datastores { type namespaces } }")["datastores"]
             if d["namespaces"]}
    assert types[spark_ns] == "file" and types["bigquery"] == "bigquery" and types[f"gs://exports-{tag}"] == "gcs"
