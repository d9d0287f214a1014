"""An analyst's notebook, as a script: find a table by name, put what it feeds in a pandas
DataFrame, and follow a PII column to every column its value reaches. Only `requests` and
`pandas`, against Tributary's REST API (every route is described at /openapi.json).

    TRIBUTARY_URL=http://127.0.0.1:8080 TRIBUTARY_TOKEN=trb_... \
        python examples/notebook.py shop.raw.orders customer_email

The test suite runs it (tests/python/test_rest_api.py) against a running `tributary serve`.
"""

import os
import sys

import pandas as pd
import requests

URL = os.environ.get("TRIBUTARY_URL", "http://127.0.0.1:8080")
TOKEN = os.environ.get("TRIBUTARY_TOKEN", "")


def api(path, **params):
    """GET a REST route; a refusal raises with the server's `detail` (which says what to fix)."""
    r = requests.get(f"{URL}{path}", params=params, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    if not r.ok:
        raise RuntimeError(f"{r.status_code} {path}: {r.json().get('detail')}")
    return r.json()


def walk(table, column):
    # 1. Find the table by name. A qualified name, or any unique end of it: `orders` works
    #    while only one table is called that; otherwise the 400 lists the candidates, each as
    #    `datastore:database.schema.table` (the same table in prod and staging), ready to pass
    #    here. An OpenLineage `namespace/name` or the table's id works too.
    graph = api("/admin/lineage/graph", root=table, depth=1)
    root = graph["root"]
    # From here on the table is named by its id: its qualified name may be another
    # datastore's too.
    table_id = root["id"]
    print(f"{root['qualified_name']} (container {root['id']} in {root['datastore_name']}):",
          f"{len(graph['nodes']) - 1} neighbour(s), {len(graph['edges'])} edge(s)")

    # 2. Everything it feeds, nearest first, as a DataFrame.
    impact = api("/admin/lineage/impact", container_id=table_id)
    impact_df = pd.DataFrame(impact["tables"], columns=["qualified_name", "datastore_name", "distance", "via_operation"])
    print(f"\nImpact of {root['qualified_name']}" + (" (cut short)" if impact["is_partial"] else ""))
    print(impact_df.to_string(index=False))

    # 3. Follow a PII column: every (table, column) its value flows into, and whether it was
    #    transformed on the way (`derived`) or copied as is.
    flow = api("/admin/lineage/pii-flow", container_id=table_id, column=column)
    flow_df = pd.DataFrame(flow["columns"], columns=["table", "column", "distance", "derived"])
    copies = flow_df[~flow_df["derived"]]
    print(f"\n{root['qualified_name']}.{column} flows into {len(flow_df)} column(s);"
          f" {len(copies)} of them hold it unchanged:")
    print(flow_df.to_string(index=False))
    return root, impact_df, flow_df


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: notebook.py TABLE COLUMN")
    walk(sys.argv[1], sys.argv[2])
