"""Graph exports read back by real parsers, against a running Tributary (TRIBUTARY_URL, with the
token TRIBUTARY_TOKEN): `format=csv` with Python's csv module, `format=graphml` with networkx's
read_graphml, `format=dot` rendered to SVG by Graphviz's `dot`, and `format=mermaid` checked
line by line. The tables have hostile names: a spreadsheet formula, quotes and markup, a closing
bracket and a line break.

Run by scripts/test against each store. Names are unique per run: the Neo4j store is shared.
"""

import csv
import io
import os
import subprocess
import uuid
import xml.etree.ElementTree as ET

import networkx as nx
import pytest
import requests

URL = os.environ.get("TRIBUTARY_URL", "http://127.0.0.1:8080")
TOKEN = os.environ.get("TRIBUTARY_TOKEN", "test-token")
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TAG = uuid.uuid4().hex[:8]
# The names are the qualified names (no database or schema), so a formula starts its cell.
HOSTILE = [f'=HYPERLINK("http://evil.example/{TAG}","click")', f'a"b<c>]&d{TAG}', f"two\nlines{TAG}", f"@sum|x`#{TAG}"]
ORDERS = f"orders_{TAG}"


def gql(query, variables=None):
    r = requests.post(f"{URL}/graphql", json={"query": query, "variables": variables or {}}, headers=AUTH, timeout=30)
    out = r.json()
    assert not out.get("errors"), out
    return out["data"]


@pytest.fixture(scope="module")
def orders():
    """`orders` feeds each hostile table in turn, by table and by column (`v`) edges."""
    ds = gql(
        "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
        {"i": {"name": f"-exports-{TAG}", "type": "snowflake"}},
    )["upsertDatastore"]["id"]

    def table(name):
        c = gql(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id fields { items { id } } } }",
            {"i": {"datastoreId": ds, "name": name, "fields": [{"name": "v"}]}},
        )["upsertContainer"]
        return c["id"], c["fields"]["items"][0]["id"]

    first = prev = table(ORDERS)
    for name in HOSTILE:
        cur = table(name)
        for s, t, kind in [(prev[0], cur[0], "Container"), (prev[1], cur[1], "Field")]:
            gql(f"mutation($s: Int, $t: Int) {{ createEdge(input: {{source{kind}Id: $s, target{kind}Id: $t}}) {{ id }} }}",
                {"s": s, "t": t})
        prev = cur
    return first[0]


def export(path, fmt):
    r = requests.get(f"{URL}{path}&format={fmt}", headers=AUTH, timeout=30)
    assert r.status_code == 200, r.text
    return r


def test_csv_reads_back_with_no_formula_cell(orders):
    r = export(f"/api/lineage/graph?container_id={orders}&depth=5", "csv")
    assert r.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.text, newline="")))
    assert len(rows) == 4
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "-", "@")), (value, row)
    # A spreadsheet shows the formula and the @ name as text; the others come back as they are.
    assert {row["target"] for row in rows} == {"'" + HOSTILE[0], HOSTILE[1], HOSTILE[2], "'" + HOSTILE[3]}
    assert {row["source"] for row in rows} == {ORDERS, "'" + HOSTILE[0], HOSTILE[1], HOSTILE[2]}
    assert {row["source_datastore"] for row in rows} == {f"'-exports-{TAG}"}
    assert {row["type"] for row in rows} == {"table"}


def test_graphml_loads_in_networkx_with_every_name_intact(orders):
    r = export(f"/api/lineage/graph?container_id={orders}&depth=5", "graphml")
    g = nx.read_graphml(io.BytesIO(r.content))
    assert g.is_directed()
    names = {d["name"] for _, d in g.nodes(data=True)}
    assert names == {ORDERS, *HOSTILE}, names
    assert g.number_of_edges() == 4
    assert all(d["source_type"] == "manual" for _, _, d in g.edges(data=True))
    # The impact export carries each table's distance.
    g = nx.read_graphml(io.BytesIO(export(f"/admin/lineage/impact?table={ORDERS}", "graphml").content))
    distance = {d["name"]: int(d["distance"]) for _, d in g.nodes(data=True)}
    assert distance[ORDERS] == 0 and distance[HOSTILE[-1]] == 4, distance
    # Column lineage: pii-flow over the column edges.
    g = nx.read_graphml(io.BytesIO(export(f"/admin/lineage/pii-flow?table={ORDERS}&column=v", "graphml").content))
    assert g.number_of_edges() == 4 and {d["kind"] for _, d in g.nodes(data=True)} == {"column"}
    assert {d["name"] for _, d in g.nodes(data=True)} == {f"{n}.v" for n in [ORDERS, *HOSTILE]}


def test_dot_renders_with_graphviz(orders):
    for path in [f"/api/lineage/graph?container_id={orders}&depth=5", f"/admin/lineage/graph?root={ORDERS}&depth=5",
                 f"/admin/lineage/impact?table={ORDERS}", f"/admin/lineage/pii-flow?table={ORDERS}&column=v"]:
        dot = export(path, "dot").text
        svg = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, timeout=60)
        assert svg.returncode == 0, (svg.stderr.decode(), dot)
        root = ET.fromstring(svg.stdout)
        # Every name stayed one node: none broke out into statements of its own.
        classes = [e.get("class") for e in root.iter()]
        assert classes.count("node") == 5 and classes.count("edge") == 4, (path, dot)
        assert any(HOSTILE[1] in (t or "") for t in root.itertext()), (path, dot)


def test_mermaid_is_one_statement_per_line(orders):
    text = export(f"/api/lineage/graph?container_id={orders}&depth=5", "mermaid").text
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    nodes = [l for l in lines[1:] if "-->" not in l]
    edges = [l for l in lines[1:] if "-->" in l]
    assert len(nodes) == 5 and len(edges) == 4, text
    for line in nodes:
        label = line.split('["', 1)[1].rsplit('"]', 1)[0]
        assert '"' not in label and "`" not in label, line


def test_an_unknown_format_is_refused_naming_the_allowed_ones(orders):
    r = requests.get(f"{URL}/api/lineage/graph?container_id={orders}&format=xlsx", headers=AUTH, timeout=30)
    assert r.status_code == 400
    assert r.json() == {"detail": 'query parameter format must be one of json, csv, dot, graphml, mermaid; got "xlsx"'}
