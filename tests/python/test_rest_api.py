"""The REST API as a notebook meets it, against a running Tributary (TRIBUTARY_URL, with the token
TRIBUTARY_TOKEN): /openapi.json is a valid OpenAPI document that lists every route the router
serves, and examples/notebook.py runs on data made here.

Run by scripts/test against each store. Names are unique per run: the Neo4j store is shared.
"""

import importlib.util
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import requests
from openapi_spec_validator import validate

URL = os.environ.get("TRIBUTARY_URL", "http://127.0.0.1:8080")
TOKEN = os.environ.get("TRIBUTARY_TOKEN", "test-token")
ROOT = Path(__file__).resolve().parents[2]
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def gql(query, variables=None):
    r = requests.post(f"{URL}/graphql", json={"query": query, "variables": variables or {}}, headers=AUTH, timeout=30)
    out = r.json()
    assert not out.get("errors"), out
    return out["data"]


@pytest.fixture(scope="module")
def document():
    r = requests.get(f"{URL}/openapi.json", timeout=30)
    assert r.status_code == 200, "the document needs no token"
    return r.json()


def test_the_document_is_valid_openapi_3_1(document):
    assert document["openapi"].startswith("3.1")
    validate(document)
    assert document["components"]["securitySchemes"]["bearer"] == {
        **document["components"]["securitySchemes"]["bearer"],
        "type": "http",
        "scheme": "bearer",
    }


def served_routes():
    """Every (method, path) the router registers: `.route("path", get(..).post(..))` in src/api,
    and the REST routes, which `utoipa_axum::routes!` registers from their documentation."""
    routes = set()
    for source in (ROOT / "src" / "api").rglob("*.rs"):
        text = source.read_text()
        for m in re.finditer(r'\.route\(\s*"([^"]+)"\s*,((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)', text):
            # axum's catch-all `{*path}` is an ordinary `{path}` in OpenAPI.
            path, handlers = re.sub(r"\{\*(\w+)\}", r"{\1}", m.group(1)), m.group(2)
            methods = re.findall(r"\b(get|post|put|delete|patch)\(", handlers)
            assert methods, f"no method found for {path} in {source}"
            routes.update((method, path) for method in methods)
        for m in re.finditer(r"#\[utoipa::path\(\s*(get|post|put|delete|patch),\s*path\s*=\s*\"([^\"]+)\"", text):
            if source.name != "docs.rs":  # docs.rs describes the routes above; it routes nothing
                routes.add((m.group(1), m.group(2)))
    return routes


def test_every_served_route_is_documented(document):
    routes = served_routes()
    assert ("post", "/api/lineage/edges") in routes and ("post", "/api/v1/lineage") in routes, routes
    documented = {(method, path) for path, item in document["paths"].items() for method in item}
    missing = sorted(routes - documented)
    assert not missing, f"served but not in /openapi.json: {missing}"


def test_every_documented_route_is_served(document):
    # Without a token: a served route answers (401, 200, ...); an unknown path 404 with the
    # router's own "no route" detail (Marquez's "message" under /api/v1/), a known path with
    # another method 405.
    for path, item in document["paths"].items():
        for method in item:
            concrete = re.sub(r"\{[^}]+\}", "1", path)
            r = requests.request(method, f"{URL}{concrete}", timeout=30)
            assert r.status_code != 405, f"{method} {path}: not served (405)"
            unrouted = r.status_code == 404 and r.headers.get("content-type", "").startswith("application/json") \
                and str(r.json().get("detail", r.json().get("message", ""))).startswith("no route")
            assert not unrouted, f"{method} {path}: not served (404)"


def test_rest_routes_document_their_parameters_and_statuses(document):
    graph = document["paths"]["/api/lineage/graph"]["get"]
    params = {p["name"]: p for p in graph["parameters"]}
    assert params["container_id"]["required"] is True
    assert params["depth"]["schema"]["default"] == 2
    assert params["depth"]["schema"]["maximum"] == 20
    assert set(params["side"]["schema"]["enum"]) == {"upstream", "downstream"}
    create = document["paths"]["/api/lineage/edges"]["post"]
    assert {"201", "400", "401", "403", "404", "409", "422"} <= set(create["responses"])
    assert create["security"] == [{"bearer": []}]
    assert document["paths"]["/healthz"]["get"]["security"] == [{}]
    for path in ["/admin/lineage/graph", "/admin/lineage/columns", "/admin/lineage/impact", "/admin/lineage/pii-flow"]:
        assert {"200", "400", "401", "404"} <= set(document["paths"][path]["get"]["responses"]), path


@pytest.fixture(scope="module")
def shop():
    """Three tables in a datastore of their own, with column lineage made through REST."""
    tag = uuid.uuid4().hex[:8]
    ds = gql(
        "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
        {"i": {"name": f"shop-{tag}", "type": "postgresql", "storeType": "jdbc"}},
    )["upsertDatastore"]["id"]
    db = f"shop_{tag}"
    tables = {}
    for schema, name, fields in [
        ("raw", "orders", ["id", "customer_email", "amount"]),
        ("staging", "orders_clean", ["order_id", "email", "email_domain", "amount"]),
        ("mart", "revenue_daily", ["day", "revenue"]),
    ]:
        c = gql(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id fields { items { id name } } } }",
            {"i": {"datastoreId": ds, "database": db, "schema": schema, "name": name,
                   "fields": [{"name": f, "type": "text"} for f in fields]}},
        )["upsertContainer"]
        tables[name] = (c["id"], {f["name"]: f["id"] for f in c["fields"]["items"]})

    def edge(body):
        r = requests.post(f"{URL}/api/lineage/edges", json=body, headers=AUTH, timeout=30)
        assert r.status_code == 201, r.text
        return r.json()

    raw, clean, daily = tables["orders"], tables["orders_clean"], tables["revenue_daily"]
    edge({"source_field_id": raw[1]["customer_email"], "target_field_id": clean[1]["email"], "description": "lower(trim(customer_email))"})
    edge({"source_field_id": raw[1]["amount"], "target_field_id": clean[1]["amount"]})
    edge({"source_field_id": clean[1]["email"], "target_field_id": clean[1]["email_domain"], "description": "split_part(email, '@', 2)"})
    edge({"source_container_id": clean[0], "target_container_id": daily[0], "description": "daily revenue"})
    edge({"source_field_id": clean[1]["amount"], "target_field_id": daily[1]["revenue"], "description": "sum(amount)"})
    return db, tables


def test_the_notebook_walks_from_a_table_name_to_its_pii(shop):
    db, tables = shop
    spec = importlib.util.spec_from_file_location("notebook", ROOT / "examples" / "notebook.py")
    notebook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(notebook)
    notebook.URL, notebook.TOKEN = URL, TOKEN
    root, impact, flow = notebook.walk(f"{db}.raw.orders", "CUSTOMER_EMAIL")
    assert root["id"] == tables["orders"][0]
    assert list(impact["qualified_name"]) == [f"{db}.staging.orders_clean", f"{db}.mart.revenue_daily"]
    assert list(impact["distance"]) == [1, 2]
    assert sorted(zip(flow["table"], flow["column"], flow["distance"])) == [
        (f"{db}.staging.orders_clean", "email", 1),
        (f"{db}.staging.orders_clean", "email_domain", 2),
    ]
    # As a script, the way the README runs it.
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "notebook.py"), f"{db}.raw.orders", "customer_email"],
        env={**os.environ, "TRIBUTARY_URL": URL, "TRIBUTARY_TOKEN": TOKEN},
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout
    assert f"{db}.mart.revenue_daily" in out and "email_domain" in out, out


def test_names_resolve_like_the_rest_of_tributary(shop):
    db, tables = shop
    r = requests.get(f"{URL}/admin/lineage/columns", params={"table": f"{db}.staging.ORDERS_CLEAN"}, headers=AUTH, timeout=30)
    assert r.status_code == 200, r.text
    cols = {(c["column"], c["source_column"]) for c in r.json()["columns"]}
    assert ("email", "customer_email") in cols and ("email_domain", "email") in cols
    r = requests.get(f"{URL}/admin/lineage/impact", params={"table": f"{db}.nowhere"}, headers=AUTH, timeout=30)
    assert r.status_code == 404 and "not found" in r.json()["detail"]
    r = requests.get(f"{URL}/admin/lineage/impact", params={"table": f"{db}.raw.orders"}, timeout=30)
    assert r.status_code == 401 and "detail" in r.json()
