"""`Tributary`: the GraphQL API as networkx graphs and pandas DataFrames."""

from __future__ import annotations

import numbers
import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import networkx as nx
import pandas as pd
import requests

from .errors import _BY_STATUS, AmbiguousNameError, BadInputError, NotFoundError, error_for

__all__ = ["Tributary", "Node", "Change", "Explanation", "TableRef", "JobRef", "Instant"]

#: An instant: a `datetime` (naive ones are taken as UTC) or an RFC 3339 string.
Instant = Union[datetime, str]


@dataclass(frozen=True)
class Node:
    """A resolved lineage node: a catalogued container, or an external asset.

    `id` is the container id (an `int`) or the external asset's `ext:<source_type>:<fqn>` id;
    `name` is the container's qualified name (`database.schema.name`) or the asset's fqn.
    """

    kind: str
    id: Union[int, str]
    name: str
    datastore: Optional[str] = None
    datastore_id: Optional[int] = None

    def __str__(self) -> str:
        return f"{self.datastore}:{self.name}" if self.datastore else self.name


#: A table: a container id, a (qualified) name, `"datastore:name"`, an OpenLineage
#: `(namespace, name)` pair, an `ext:` id, or a `Node` already resolved.
TableRef = Union[int, str, Tuple[str, str], Node]

#: A job: its id, a `(namespace, name)` pair, `"namespace/name"`, or a name that names one job.
JobRef = Union[int, str, Tuple[str, str]]


@dataclass(frozen=True)
class Change:
    """One entry of the change log (see `Tributary.changes`)."""

    cursor: str
    kind: str
    at: datetime
    edge_id: Optional[int]
    field_id: Optional[int]
    container_ids: List[int]
    detail: Any = None


@dataclass
class Explanation:
    """Why `source` feeds `target` (see `Tributary.explain`).

    `paths` lists each path as the qualified names along it; `hops` has one row per hop of
    each path (`path` is its index in `paths`); `reason` says why there is no path
    (`NO_CONNECTION`, `ENDS_HIDDEN`), `is_partial` that more paths exist than were asked for.
    """

    source: Node
    target: Node
    paths: List[List[str]]
    hops: pd.DataFrame
    reason: Optional[str]
    is_partial: bool
    cycles: List[List[int]] = field(default_factory=list)


# How many candidates an ambiguous name's message lists.
_NAMED_CANDIDATES = 10
# Aliases the service allows in one document.
_MAX_ALIASES = 50
_CONTAINER = "id name database schema datastoreId datastoreName"
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _instant(value: Optional[Instant]) -> Optional[str]:
    """An RFC 3339 string for the service; naive datetimes are UTC."""
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    return str(value)


def _parse_instant(value: Optional[str]) -> Optional[datetime]:
    if value is None:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _side(side: Optional[str], allow_both: bool = True) -> Optional[str]:
    """`UPSTREAM`, `DOWNSTREAM` or None (both), from any spelling."""
    if side is None:
        return None
    s = str(side).strip().upper()
    if s in ("UP", "UPSTREAM"):
        return "UPSTREAM"
    if s in ("DOWN", "DOWNSTREAM"):
        return "DOWNSTREAM"
    if allow_both and s in ("BOTH", ""):
        return None
    allowed = "'upstream', 'downstream'" + (" or None (both)" if allow_both else "")
    raise BadInputError(f"side must be {allowed}, got {side!r}", "BAD_USER_INPUT")


def qualified_name(c: Dict[str, Any]) -> str:
    """`database.schema.name` of a container record (empty parts left out)."""
    return ".".join(p for p in (c.get("database"), c.get("schema"), c.get("name")) if p)


def _match_rank(wanted: str, key: str) -> int:
    """How well a container's lowercased `database.schema.name` matches a lowercased name,
    as the service ranks it: 3 exact, 2 when one ends the other at a dot, 1 when the name ends
    with it at a slash (a path), 0 no match."""

    def ends_at(long: str, short: str, sep: str) -> bool:
        return len(long) > len(short) and long.endswith(short) and long[: len(long) - len(short)].endswith(sep)

    if key == wanted:
        return 3
    if ends_at(wanted, key, ".") or ends_at(key, wanted, "."):
        return 2
    if ends_at(wanted, key, "/"):
        return 1
    return 0


def _frame(rows: List[Dict[str, Any]], columns: Sequence[str], times: Sequence[str] = ()) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=list(columns))
    for col in times:
        df[col] = pd.to_datetime(df[col], utc=True, format="ISO8601")
    return df


class Tributary:
    """A client of one Tributary service.

    >>> tb = Tributary("http://127.0.0.1:8080", token="trb_...")
    >>> tb.impact("shop.raw.orders")            # doctest: +SKIP

    Every method asks `POST /graphql` only. Errors the service answers raise `TributaryError`
    (or its subclass for the code) with the service's `code` and message.
    """

    def __init__(
        self,
        url: str,
        token: Optional[str] = None,
        *,
        timeout: float = 60.0,
        session: Optional[requests.Session] = None,
    ) -> None:
        """`url` is the service's base URL (`http://127.0.0.1:8080`), `token` an API token
        (`trb_...`; None when the service runs with `TRIBUTARY_AUTH=off`)."""
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.session = session or requests.Session()

    @classmethod
    def from_env(cls, **kwargs: Any) -> "Tributary":
        """A client for `$TRIBUTARY_URL` (default `http://127.0.0.1:8080`) with
        `$TRIBUTARY_TOKEN`."""
        return cls(
            os.environ.get("TRIBUTARY_URL", "http://127.0.0.1:8080"),
            os.environ.get("TRIBUTARY_TOKEN") or None,
            **kwargs,
        )

    def __repr__(self) -> str:
        return f"Tributary({self.url!r})"

    # ---------------------------------------------------------------------------- transport

    def query(self, query: str, variables: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """Sends one GraphQL document and returns its `data`; any error in the answer raises
        (the first error decides the class; `errors` holds them all)."""
        headers = {"content-type": "application/json"}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        r = self.session.post(
            f"{self.url}/graphql",
            json={"query": query, "variables": variables or {}},
            headers=headers,
            timeout=self.timeout,
        )
        retry = r.headers.get("retry-after")
        retry_after = float(retry) if retry and retry.replace(".", "", 1).isdigit() else None
        try:
            body = r.json()
        except ValueError:
            body = None
        errors = body.get("errors") if isinstance(body, dict) else None
        if errors:
            first = errors[0]
            ext = first.get("extensions") or {}
            raise error_for(
                first.get("message", "error"),
                ext.get("code"),
                path=first.get("path"),
                errors=errors,
                status=r.status_code,
                retry_after=retry_after,
            )
        if r.status_code != 200 or not isinstance(body, dict) or "data" not in body:
            detail = body.get("detail") if isinstance(body, dict) else None
            message = detail if isinstance(detail, str) else (r.text.strip() or r.reason or "no answer")
            raise error_for(
                f"HTTP {r.status_code} from {self.url}/graphql: {message}",
                _BY_STATUS.get(r.status_code),
                status=r.status_code,
                retry_after=retry_after,
            )
        data: Dict[str, Any] = body["data"]
        return data

    def _field(self, name: str, args: Dict[str, Tuple[str, Any]], selection: str) -> Any:
        """`{ name(args) selection }` with the arguments given (None ones left out, so the
        service's defaults apply)."""
        given = {k: v for k, v in args.items() if v[1] is not None}
        decl = ", ".join(f"${k}: {t}" for k, (t, _) in given.items())
        call = ", ".join(f"{k}: ${k}" for k in given)
        doc = f"query{f'({decl})' if decl else ''} {{ r: {name}{f'({call})' if call else ''} {selection} }}"
        return self.query(doc, {k: v for k, (_, v) in given.items()})["r"]

    # ---------------------------------------------------------------------------- names

    def datastores(self) -> pd.DataFrame:
        """Every datastore: id, name, type and the OpenLineage namespaces it lists."""
        rows = self.query("{ datastores { id name type namespaces } }")["datastores"]
        return _frame(rows, ["id", "name", "type", "namespaces"])

    def resolve(self, table: TableRef) -> Node:
        """The node a table reference denotes.

        - an `int`: a container id;
        - `"shop.raw.orders"`: a qualified name (`database.schema.name`) or any end of it that
          names one table best (`"raw.orders"`, `"orders"`), ignoring case, ranked as the
          service ranks names (exact, then one ending the other at a dot, then a path's end);
        - `"warehouse:shop.raw.orders"`: the same within the datastore named `warehouse`;
        - `("postgres://db:5432", "shop.raw.orders")`: an OpenLineage dataset's namespace and
          name, resolved by the service's `node` query (a container, or an external asset);
        - `"ext:openlineage:s3://bucket/key"`: an external asset's id.

        Raises `NotFoundError` when nothing matches and `AmbiguousNameError` (listing the
        candidates) when several tables match equally well.
        """
        if isinstance(table, Node):
            return table
        if isinstance(table, bool):
            raise TypeError("a table is an id, a name or a (namespace, name) pair, not a bool")
        if isinstance(table, numbers.Integral):  # numpy's integers too (a DataFrame's ids)
            table = int(table)
            c = self._field("container", {"id": ("Int!", table)}, f"{{ {_CONTAINER} }}")
            if c is None:
                raise NotFoundError(f"Container {table} not found", "NOT_FOUND")
            return self._node_of(c)
        if isinstance(table, tuple):
            if len(table) != 2:
                raise TypeError("an OpenLineage dataset is a (namespace, name) pair")
            ns, name = table
            n = self._field(
                "node",
                {"namespace": ("String!", ns), "name": ("String!", name)},
                f"{{ kind containerId externalId fqn container {{ {_CONTAINER} }} }}",
            )
            if n is None:
                raise NotFoundError(
                    f"No table or lineage is known for the OpenLineage dataset {ns!r} {name!r}", "NOT_FOUND"
                )
            if n["kind"] == "container" and n["container"] is not None:
                return self._node_of(n["container"])
            return Node("external", n["externalId"], n["fqn"] or name)
        if not isinstance(table, str):
            raise TypeError(f"a table is an id, a name or a (namespace, name) pair, not {type(table).__name__}")
        text = table.strip()
        if not text:
            raise BadInputError("a table name is required, such as database.schema.table", "BAD_USER_INPUT")
        if text.startswith("ext:"):
            n = self._field("externalNode", {"id": ("String!", text)}, "{ externalId fqn }")
            if n is None:
                raise NotFoundError(f"No live lineage names the external asset {text!r}", "NOT_FOUND")
            return Node("external", n["externalId"], n["fqn"])
        if ":" in text:
            stores = self.query("{ datastores { id name } }")["datastores"]
            prefixed = sorted(
                (d for d in stores if text.lower().startswith(d["name"].lower() + ":")),
                key=lambda d: -len(d["name"]),
            )
            for d in prefixed:
                rest = text[len(d["name"]) + 1 :]
                found = self._find(rest, d["id"])
                if found is not None:
                    return found
            if prefixed:
                raise NotFoundError(
                    f"Table {text[len(prefixed[0]['name']) + 1:]!r} not found in datastore {prefixed[0]['name']!r}",
                    "NOT_FOUND",
                )
            found = self._find(text, None)
            if found is not None:
                return found
            names = ", ".join(sorted(d["name"] for d in stores)) or "none"
            raise NotFoundError(
                f"Table {text!r} not found, and no datastore is named {text.rsplit(':', 1)[0]!r}"
                f" (datastores: {names})",
                "NOT_FOUND",
            )
        found = self._find(text, None)
        if found is None:
            raise NotFoundError(f"Table {text!r} not found", "NOT_FOUND")
        return found

    @staticmethod
    def _node_of(c: Dict[str, Any]) -> Node:
        return Node("container", c["id"], qualified_name(c), c.get("datastoreName"), c.get("datastoreId"))

    def _find(self, name: str, datastore_id: Optional[int]) -> Optional[Node]:
        """The container a name denotes best (in one datastore, or any); None when none."""
        wanted = name.strip().lower()
        # Every match's own name contains the name's last part (after its last dot or slash).
        last = re.split(r"[./]", wanted)[-1] or wanted
        ranked: List[Tuple[int, Dict[str, Any]]] = []
        page = 1
        while True:
            p = self._field(
                "containers",
                {"datastoreId": ("Int", datastore_id), "name": ("String", last), "page": ("Int", page),
                 "size": ("Int", 1000)},
                f"{{ pages items {{ {_CONTAINER} }} }}",
            )
            for c in p["items"]:
                rank = _match_rank(wanted, qualified_name(c).lower())
                if rank:
                    ranked.append((rank, c))
            if page >= p["pages"]:
                break
            page += 1
        if not ranked:
            return None
        best = max(r for r, _ in ranked)
        top = sorted((c for r, c in ranked if r == best), key=lambda c: c["id"])
        if len(top) == 1:
            return self._node_of(top[0])
        named = [f"{qualified_name(c)} in datastore {c.get('datastoreName')} (container {c['id']})" for c in top]
        more = len(named) - _NAMED_CANDIDATES
        raise AmbiguousNameError(
            f"Table {name.strip()!r} is ambiguous: it matches {', '.join(named[:_NAMED_CANDIDATES])}"
            + (f" and {more} more" if more > 0 else "")
            + "; give more of the qualified name, 'datastore:name', or the container id",
            named,
        )

    def _container(self, table: TableRef, what: str) -> Node:
        node = self.resolve(table)
        if node.kind != "container":
            raise BadInputError(f"{what} needs a catalogued table; {node.name!r} is an external asset", "BAD_USER_INPUT")
        return node

    def _containers(self, ids: Iterable[int], health: bool = False) -> Dict[int, Dict[str, Any]]:
        """Container records by id, several per request (deleted ones are left out)."""
        wanted = sorted({i for i in ids if i is not None})
        out: Dict[int, Dict[str, Any]] = {}
        sel = _CONTAINER + (" health { state }" if health else "")
        # The service refuses a document of more than 50 aliases.
        for start in range(0, len(wanted), _MAX_ALIASES):
            chunk = wanted[start : start + _MAX_ALIASES]
            doc = "{ " + " ".join(f"c{i}: container(id: {i}) {{ {sel} }}" for i in chunk) + " }"
            for c in self.query(doc).values():
                if c is not None:
                    out[c["id"]] = c
        return out

    # ---------------------------------------------------------------------------- lineage

    def lineage(
        self,
        table: TableRef,
        depth: int = 2,
        side: Optional[str] = None,
        as_of: Optional[Instant] = None,
        include_jobs: bool = False,
        *,
        max_nodes: Optional[int] = None,
        health: bool = False,
    ) -> nx.DiGraph:
        """The lineage graph around a table as a `networkx.DiGraph` (`lineageGraph`).

        Nodes are keyed by container id (`int`), external asset id (`"ext:..."`) and, with
        `include_jobs`, job (`"job:<id>"`). Each node has `kind` (`container`, `external`,
        `job`), `label` (the qualified name, fqn, or `namespace/name`) and the answer's
        attributes (`datastore`, `is_target`, `has_upstream`, `has_downstream`,
        `field_count`, ...; `health` with `health=True`). An edge has `kind` (`lineage`,
        `input`: dataset to job, `output`: job to dataset), `id`, `source_type`, `operation`,
        `description`; when several lineage edges join the same two nodes, `edge_ids` and
        `source_types` list them all. `G.graph` holds `root`, `is_partial`, `frontier`,
        `cycles` and `as_of` (the instant and what could not be rebuilt).

        `side` is `"upstream"`, `"downstream"` or None (both); `as_of` an instant of the past;
        an external asset's graph (`externalLineageGraph`) takes neither `as_of` nor jobs.
        """
        node = self.resolve(table)
        s = _side(side)
        container_sel = "container { database schema" + (" health { state }" if health else "") + " }"
        sel = (
            "{ isPartial cycles asOf { at notReconstructed } frontier { id side distance reason beyond }"
            " nodes { id name isTarget hasUpstream hasDownstream containerType fieldCount linkedFieldCount"
            f" datastore {{ id name }} {container_sel} }}"
            " edges { id sourceContainerId targetContainerId sourceType operation description lastAssertedAt }"
            " externalNodes { id fqn sourceType isTarget }"
            " externalEdges { id sourceContainerId targetContainerId sourceNodeId targetNodeId sourceType operation"
            " description lastAssertedAt }"
            + (
                " jobs { id restricted namespace name jobType integration latestRun { runId state startedAt endedAt } }"
                " jobEdges { jobId kind sourceNodeId targetNodeId }"
                if include_jobs
                else ""
            )
            + " }"
        )
        if node.kind == "external":
            if as_of is not None or include_jobs or max_nodes is not None:
                raise BadInputError(
                    f"{node.name!r} is an external asset: its graph takes no as_of, include_jobs or max_nodes",
                    "BAD_USER_INPUT",
                )
            g = self._field(
                "externalLineageGraph",
                {"id": ("String!", node.id), "depth": ("Int", depth), "side": ("Side", s)},
                sel,
            )
        else:
            g = self._field(
                "lineageGraph",
                {
                    "containerId": ("Int!", node.id),
                    "depth": ("Int", depth),
                    "side": ("Side", s),
                    "asOf": ("DateTime", _instant(as_of)),
                    "maxNodes": ("Int", max_nodes),
                    "includeJobs": ("Boolean", True if include_jobs else None),
                },
                sel,
            )
        return self._graph(node, g)

    @staticmethod
    def _graph(root: Node, g: Dict[str, Any]) -> nx.DiGraph:
        G = nx.DiGraph(
            root=root.id,
            is_partial=g["isPartial"],
            cycles=g["cycles"],
            frontier=g["frontier"],
            as_of=g["asOf"],
        )
        for n in g["nodes"]:
            c = n.get("container") or {}
            qn = qualified_name({"database": c.get("database"), "schema": c.get("schema"), "name": n["name"]})
            ds = n.get("datastore") or {}
            attrs = dict(
                kind="container",
                label=qn or f"#{n['id']}",
                name=n["name"],
                qualified_name=qn or None,
                datastore=ds.get("name"),
                datastore_id=ds.get("id"),
                container_type=n["containerType"],
                is_target=n["isTarget"],
                has_upstream=n["hasUpstream"],
                has_downstream=n["hasDownstream"],
                field_count=n["fieldCount"],
                linked_field_count=n["linkedFieldCount"],
            )
            if "health" in c:
                attrs["health"] = (c.get("health") or {}).get("state")
            G.add_node(n["id"], **attrs)
        for x in g["externalNodes"]:
            G.add_node(x["id"], kind="external", label=x["fqn"], fqn=x["fqn"], source_type=x["sourceType"],
                       is_target=x["isTarget"])

        def end(container: Optional[int], other: Optional[str]) -> Union[int, str, None]:
            return container if container is not None else other

        for e in g["edges"] + g["externalEdges"]:
            u = end(e["sourceContainerId"], e.get("sourceNodeId"))
            v = end(e["targetContainerId"], e.get("targetNodeId"))
            if u is None or v is None:
                continue
            if G.has_edge(u, v):
                d = G.edges[u, v]
                d["edge_ids"].append(e["id"])
                if e["sourceType"] not in d["source_types"]:
                    d["source_types"].append(e["sourceType"])
                continue
            G.add_edge(
                u,
                v,
                kind="lineage",
                id=e["id"],
                source_type=e["sourceType"],
                operation=e["operation"],
                description=e["description"],
                last_asserted_at=e["lastAssertedAt"],
                edge_ids=[e["id"]],
                source_types=[e["sourceType"]],
            )
        for j in g.get("jobs") or []:
            run = j.get("latestRun") or {}
            label = f"{j['namespace']}/{j['name']}" if not j["restricted"] else f"job {j['id']} (restricted)"
            G.add_node(
                f"job:{j['id']}",
                kind="job",
                label=label,
                job_id=j["id"],
                namespace=j["namespace"],
                name=j["name"],
                restricted=j["restricted"],
                job_type=j["jobType"],
                integration=j["integration"],
                latest_run=run.get("runId"),
                state=run.get("state"),
            )

        def key(node_id: str) -> Union[int, str]:
            return int(node_id) if node_id.isdigit() else node_id

        for je in g.get("jobEdges") or []:
            G.add_edge(key(je["sourceNodeId"]), key(je["targetNodeId"]), kind=je["kind"].lower(), job_id=je["jobId"])
        return G

    def impact(
        self,
        table: TableRef,
        depth: int = 20,
        side: str = "downstream",
        limit: Optional[int] = None,
        as_of: Optional[Instant] = None,
    ) -> pd.DataFrame:
        """What a table feeds (or, `side="upstream"`, comes from), transitively, nearest first
        (`impact`; `externalImpact` from an external asset).

        One row per asset: `id`, `name` (the qualified name; an external asset's fqn),
        `datastore`, `distance`, `via` (the table it was reached from), `via_edge`, `operation`
        (of that edge), `health` (`FRESH`, `FAILED`, `STALE`, `UNKNOWN`; None for an external
        asset) and `kind` (`container`, or `external` for an asset outside the catalog, such as
        an S3 file, which the walk does not go on through). Nearest first. `df.attrs` holds
        `root` and `is_partial` (the depth or `limit`, default 10,000 tables, cut the answer).
        """
        node = self.resolve(table)
        s = _side(side, allow_both=False)
        near = "targetContainerId" if s == "UPSTREAM" else "sourceContainerId"
        sel = (
            f"{{ isPartial containers {{ distance via {{ id operation {near} }}"
            " container { id name database schema datastoreName } health { state } }"
            f" externals {{ distance via {{ id operation {near} }} external {{ id fqn }} }} }}"
        )
        if node.kind == "external":
            if as_of is not None:
                raise BadInputError(f"{node.name!r} is an external asset: its impact takes no as_of", "BAD_USER_INPUT")
            a = self._field(
                "externalImpact",
                {"id": ("String!", node.id), "depth": ("Int", depth), "side": ("Side", s), "limit": ("Int", limit)},
                sel,
            )
        else:
            a = self._field(
                "impact",
                {"containerId": ("Int!", node.id), "depth": ("Int", depth), "side": ("Side", s),
                 "limit": ("Int", limit), "asOf": ("DateTime", _instant(as_of))},
                sel,
            )
        names: Dict[Any, str] = {node.id: node.name}
        for item in a["containers"]:
            if item["container"]:
                names[item["container"]["id"]] = qualified_name(item["container"])
        rows = []
        for item in a["containers"]:
            c = item["container"] or {}
            via = item["via"] or {}
            near_id = via.get(near)
            rows.append(
                {
                    "id": c.get("id"),
                    "name": qualified_name(c) if c else None,
                    "datastore": c.get("datastoreName"),
                    "distance": item["distance"],
                    "via": names.get(near_id, node.name if near_id is None and via else None),
                    "via_edge": via.get("id"),
                    "operation": via.get("operation"),
                    "health": item["health"]["state"],
                    "kind": "container",
                }
            )
        for x in a.get("externals") or []:
            near_id = x["via"].get(near)
            rows.append(
                {
                    "id": x["external"]["id"],
                    "name": x["external"]["fqn"],
                    "datastore": None,
                    "distance": x["distance"],
                    "via": names.get(near_id, node.name if near_id is None else None),
                    "via_edge": x["via"]["id"],
                    "operation": x["via"]["operation"],
                    "health": None,
                    "kind": "external",
                }
            )
        rows.sort(key=lambda r: r["distance"])  # stable: the service's order within a distance
        df = _frame(rows, ["id", "name", "datastore", "distance", "via", "via_edge", "operation", "health", "kind"])
        df.attrs.update(root=str(node), is_partial=a["isPartial"])
        return df

    def pii_flow(
        self,
        table: TableRef,
        column: str,
        depth: int = 20,
        side: str = "downstream",
        *,
        limit: Optional[int] = None,
        include_indirect: bool = False,
        through_masking: bool = False,
        as_of: Optional[Instant] = None,
    ) -> pd.DataFrame:
        """Every column a column's value flows into (or, `side="upstream"`, comes from),
        nearest first (`piiFlow`).

        One row per column: `name` (the table's qualified name), `column`, `datastore`,
        `distance`, `derived` (transformed on the way rather than copied), `via` (the
        `table.column` it was reached from), `via_edge`, `field_id`, `table_id` and `health` of
        its table. `df.attrs` holds `root` and `is_partial`.
        """
        node = self._container(table, "pii_flow")
        fields = self._field(
            "containerFields",
            {"containerId": ("Int!", node.id), "name": ("String", column), "size": ("Int", 1000)},
            "{ items { id name } }",
        )["items"]
        wanted = column.strip().lower()
        match = [f for f in fields if f["name"].lower() == wanted]
        if not match:
            raise NotFoundError(f"Column {column!r} not found in table {node.name!r}", "NOT_FOUND")
        root_field = match[-1]
        s = _side(side, allow_both=False)
        near = "targetFieldId" if s == "UPSTREAM" else "sourceFieldId"
        a = self._field(
            "piiFlow",
            {
                "fieldId": ("Int!", root_field["id"]),
                "depth": ("Int", depth),
                "side": ("Side", s),
                "limit": ("Int", limit),
                "includeIndirect": ("Boolean", include_indirect or None),
                "throughMasking": ("Boolean", through_masking or None),
                "asOf": ("DateTime", _instant(as_of)),
            },
            f"{{ isPartial fields {{ distance derived via {{ id operation {near} }} field {{ id name containerId }} }} }}",
        )
        tables = self._containers((f["field"]["containerId"] for f in a["fields"] if f["field"]), health=True)
        labels: Dict[int, str] = {root_field["id"]: f"{node.name}.{root_field['name']}"}
        for f in a["fields"]:
            if f["field"]:
                owner = tables.get(f["field"]["containerId"])
                labels[f["field"]["id"]] = f"{qualified_name(owner) if owner else '?'}.{f['field']['name']}"
        rows = []
        for f in a["fields"]:
            fld = f["field"] or {}
            t: Dict[str, Any] = tables.get(fld.get("containerId", -1)) or {}
            rows.append(
                {
                    "name": qualified_name(t) if t else None,
                    "column": fld.get("name"),
                    "datastore": t.get("datastoreName"),
                    "distance": f["distance"],
                    "derived": f["derived"],
                    "via": labels.get(f["via"].get(near)),
                    "via_edge": f["via"]["id"],
                    "field_id": fld.get("id"),
                    "table_id": fld.get("containerId"),
                    "health": (t.get("health") or {}).get("state"),
                }
            )
        df = _frame(
            rows,
            ["name", "column", "datastore", "distance", "derived", "via", "via_edge", "field_id", "table_id", "health"],
        )
        df.attrs.update(root=f"{node}.{root_field['name']}", is_partial=a["isPartial"])
        return df

    def diff(
        self,
        table: TableRef,
        since: Instant,
        until: Optional[Instant] = None,
        *,
        depth: int = 2,
        side: Optional[str] = None,
    ) -> pd.DataFrame:
        """What changed around a table between `since` and `until` (default now), from
        `lineageDiff`.

        One row per change: `change` (`node appeared`, `node retired`, `edge appeared`,
        `edge retired`, `edge relabelled`), `at`, `node` (for node changes), `source`, `target`,
        `edge_id`, `source_type`, `operation`, `before` (a relabel's former
        `source_type/operation`), `job` and `run_id` (who asserted the edge). `df.attrs` holds
        `since`, `until` and `as_of` (what could not be rebuilt).
        """
        node = self._container(table, "diff")
        edge = (
            "edge { id sourceContainerId targetContainerId sourceNodeId targetNodeId sourceType operation"
            " evidence { jobName runId } }"
        )
        dnode = "kind containerId fieldId externalId"
        d = self._field(
            "lineageDiff",
            {"containerId": ("Int!", node.id), "depth": ("Int", depth), "side": ("Side", _side(side)),
             "from": ("DateTime!", _instant(since)), "to": ("DateTime", _instant(until))},
            f"{{ from to asOf {{ at notReconstructed }} appearedNodes {{ {dnode} }} retiredNodes {{ {dnode} }}"
            f" appearedEdges {{ at {edge} }} retiredEdges {{ at {edge} }}"
            f" relabelledEdges {{ before {{ at {edge} }} after {{ at {edge} }} }} }}",
        )
        ids = set()
        for n in d["appearedNodes"] + d["retiredNodes"]:
            ids.add(n["containerId"])
        changes = d["appearedEdges"] + d["retiredEdges"] + [r["after"] for r in d["relabelledEdges"]]
        for ch in changes + [r["before"] for r in d["relabelledEdges"]]:
            ids.update((ch["edge"]["sourceContainerId"], ch["edge"]["targetContainerId"]))
        names = {i: qualified_name(c) for i, c in self._containers(ids).items()}

        def label(container: Optional[int], other: Optional[str]) -> Optional[str]:
            if container is not None:
                return names.get(container, f"#{container}")
            return other

        def node_row(change: str, n: Dict[str, Any]) -> Dict[str, Any]:
            name = label(n["containerId"], n["externalId"])
            if n["fieldId"] is not None:
                name = f"field {n['fieldId']}"
            return {"change": change, "node": name}

        def edge_row(change: str, ch: Dict[str, Any], before: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
            e = ch["edge"]
            ev: Dict[str, Any] = next((x for x in e["evidence"] if x.get("jobName") or x.get("runId")), {})
            return {
                "change": change,
                "at": ch["at"],
                "source": label(e["sourceContainerId"], e["sourceNodeId"]),
                "target": label(e["targetContainerId"], e["targetNodeId"]),
                "edge_id": e["id"],
                "source_type": e["sourceType"],
                "operation": e["operation"],
                "before": f"{before['edge']['sourceType']}/{before['edge']['operation']}" if before else None,
                "job": ev.get("jobName"),
                "run_id": ev.get("runId"),
            }

        rows = [node_row("node appeared", n) for n in d["appearedNodes"]]
        rows += [node_row("node retired", n) for n in d["retiredNodes"]]
        rows += [edge_row("edge appeared", ch) for ch in d["appearedEdges"]]
        rows += [edge_row("edge retired", ch) for ch in d["retiredEdges"]]
        rows += [edge_row("edge relabelled", r["after"], r["before"]) for r in d["relabelledEdges"]]
        df = _frame(
            rows,
            ["change", "at", "node", "source", "target", "edge_id", "source_type", "operation", "before", "job", "run_id"],
            times=["at"],
        )
        df.attrs.update(root=str(node), since=d["from"], until=d["to"], as_of=d["asOf"])
        return df

    def explain(
        self,
        source: TableRef,
        target: TableRef,
        *,
        max_paths: Optional[int] = None,
        max_depth: Optional[int] = None,
        as_of: Optional[Instant] = None,
    ) -> Explanation:
        """Why `source` feeds `target`: the shortest distinct paths between the two tables,
        each hop with who asserted it (`explainLineage`). No path is not an error: `paths` is
        empty and `reason` says why."""
        a = self._container(source, "explain")
        b = self._container(target, "explain")
        e = self._field(
            "explainLineage",
            {
                "from": ("EndInput!", {"containerId": a.id}),
                "to": ("EndInput!", {"containerId": b.id}),
                "maxPaths": ("Int", max_paths),
                "maxDepth": ("Int", max_depth),
                "asOf": ("DateTime", _instant(as_of)),
            },
            "{ reason isPartial cycles paths { length nodeIds hops { sourceType operation firstObserved"
            " lastObserved edge { id sourceContainerId targetContainerId } evidence { jobName runId } } } }",
        )
        ids = {i for p in e["paths"] for i in p["nodeIds"]}
        names = {i: qualified_name(c) for i, c in self._containers(ids).items()}
        paths = [[names.get(i, f"#{i}") for i in p["nodeIds"]] for p in e["paths"]]
        rows = []
        for k, p in enumerate(e["paths"]):
            for step, h in enumerate(p["hops"]):
                ev: Dict[str, Any] = next((x for x in h["evidence"] if x.get("jobName") or x.get("runId")), {})
                rows.append(
                    {
                        "path": k,
                        "step": step,
                        "source": names.get(h["edge"]["sourceContainerId"]),
                        "target": names.get(h["edge"]["targetContainerId"]),
                        "edge_id": h["edge"]["id"],
                        "source_type": h["sourceType"],
                        "operation": h["operation"],
                        "first_observed": h["firstObserved"],
                        "last_observed": h["lastObserved"],
                        "job": ev.get("jobName"),
                        "run_id": ev.get("runId"),
                    }
                )
        hops = _frame(
            rows,
            ["path", "step", "source", "target", "edge_id", "source_type", "operation", "first_observed",
             "last_observed", "job", "run_id"],
            times=["first_observed", "last_observed"],
        )
        return Explanation(a, b, paths, hops, e["reason"], e["isPartial"], e["cycles"])

    # ---------------------------------------------------------------------------- jobs and runs

    _JOB = "id restricted namespace name jobType integration processingType description"
    _RUN = "runId state startedAt endedAt durationMs errorMessage"

    def jobs(
        self,
        namespace: Optional[str] = None,
        name: Optional[str] = None,
        last_run_state: Optional[str] = None,
        datastore: Union[int, str, None] = None,
    ) -> pd.DataFrame:
        """Jobs (`jobs`), every page: `id`, `namespace`, `name`, `job_type`, `integration`,
        `processing_type`, `latest_run`, `state` (of the latest run), `started_at`,
        `ended_at`, `inputs` and `outputs` (the datasets' OpenLineage names), `restricted`.

        `name` is a case-insensitive substring; `last_run_state` one of `START`, `RUNNING`,
        `COMPLETE`, `FAIL`, `ABORT`, `OTHER`; `datastore` an id or name (jobs touching it)."""
        ds_id: Optional[int]
        if isinstance(datastore, str):
            stores = self.query("{ datastores { id name } }")["datastores"]
            found = [d["id"] for d in stores if d["name"].lower() == datastore.strip().lower()]
            if not found:
                raise NotFoundError(f"No datastore is named {datastore!r}", "NOT_FOUND")
            ds_id = found[0]
        else:
            ds_id = datastore
        rows = []
        page = 1
        while True:
            p = self._field(
                "jobs",
                {
                    "namespace": ("String", namespace),
                    "name": ("String", name),
                    "lastRunState": ("RunState", last_run_state.upper() if last_run_state else None),
                    "datastoreId": ("Int", ds_id),
                    "page": ("Int", page),
                    "size": ("Int", 100),
                },
                f"{{ pages items {{ {self._JOB} latestRun {{ {self._RUN} }} inputs {{ namespace name }}"
                " outputs { namespace name } } }",
            )
            for j in p["items"]:
                run = j["latestRun"] or {}
                rows.append(
                    {
                        "id": j["id"],
                        "namespace": j["namespace"],
                        "name": j["name"],
                        "job_type": j["jobType"],
                        "integration": j["integration"],
                        "processing_type": j["processingType"],
                        "latest_run": run.get("runId"),
                        "state": run.get("state"),
                        "started_at": run.get("startedAt"),
                        "ended_at": run.get("endedAt"),
                        "inputs": [f"{x['namespace']}/{x['name']}" for x in j["inputs"]],
                        "outputs": [f"{x['namespace']}/{x['name']}" for x in j["outputs"]],
                        "restricted": j["restricted"],
                    }
                )
            if page >= p["pages"]:
                break
            page += 1
        return _frame(
            rows,
            ["id", "namespace", "name", "job_type", "integration", "processing_type", "latest_run", "state",
             "started_at", "ended_at", "inputs", "outputs", "restricted"],
            times=["started_at", "ended_at"],
        )

    def job(self, job: JobRef) -> Dict[str, Any]:
        """One job's record (`id`, `namespace`, `name`, ...), by id, `(namespace, name)`,
        `"namespace/name"` or a name that names one job; `NotFoundError` or
        `AmbiguousNameError` otherwise."""
        sel = f"{{ {self._JOB} }}"
        if isinstance(job, bool):
            raise TypeError("a job is an id, a (namespace, name) pair or a name, not a bool")
        if isinstance(job, numbers.Integral):
            found: Dict[str, Any] = self._field("job", {"id": ("Int", int(job))}, sel)
            return found
        if isinstance(job, tuple):
            ns, name = job
            found = self._field("job", {"namespace": ("String", ns), "name": ("String", name)}, sel)
            return found
        text = str(job).strip()
        tail = text.rsplit("/", 1)[-1] or text
        candidates: List[Dict[str, Any]] = []
        page = 1
        while True:
            p = self._field(
                "jobs",
                {"name": ("String", tail), "page": ("Int", page), "size": ("Int", 1000)},
                f"{{ pages items {{ {self._JOB} }} }}",
            )
            candidates += [j for j in p["items"] if not j["restricted"]]
            if page >= p["pages"]:
                break
            page += 1
        full = [j for j in candidates if f"{j['namespace']}/{j['name']}".lower() == text.lower()]
        named = full or [j for j in candidates if (j["name"] or "").lower() == text.lower()]
        if len(named) == 1:
            return named[0]
        if not named:
            raise NotFoundError(f"Job {text!r} not found (name it as 'namespace/name' or by id)", "NOT_FOUND")
        listed = [f"{j['namespace']}/{j['name']} (job {j['id']})" for j in named]
        raise AmbiguousNameError(
            f"Job {text!r} is ambiguous: it matches {', '.join(listed[:_NAMED_CANDIDATES])}; give 'namespace/name'",
            listed,
        )

    def runs(
        self,
        job: JobRef,
        state: Optional[str] = None,
        since: Optional[Instant] = None,
        until: Optional[Instant] = None,
    ) -> pd.DataFrame:
        """A job's runs, the latest first (`job { runs }`), every page: `run_id`, `job`,
        `state`, `started_at`, `ended_at`, `duration_ms`, `error_message`, `inputs`,
        `outputs`. `since`/`until` bound when they began."""
        j = self.job(job)
        rows = []
        page = 1
        while True:
            args = {
                "state": ("RunState", state.upper() if state else None),
                "since": ("DateTime", _instant(since)),
                "until": ("DateTime", _instant(until)),
                "page": ("Int", page),
                "size": ("Int", 200),
            }
            given = {k: v for k, v in args.items() if v[1] is not None}
            decl = "".join(f", ${k}: {t}" for k, (t, _) in given.items())
            call = ", ".join(f"{k}: ${k}" for k in given)
            got = self.query(
                f"query($id: Int{decl}) {{ job(id: $id) {{ runs({call}) {{ pages items {{ {self._RUN}"
                " inputs { namespace name } outputs { namespace name } } } } }",
                {"id": j["id"], **{k: v for k, (_, v) in given.items()}},
            )["job"]["runs"]
            for r in got["items"]:
                rows.append(
                    {
                        "run_id": r["runId"],
                        "job": f"{j['namespace']}/{j['name']}",
                        "state": r["state"],
                        "started_at": r["startedAt"],
                        "ended_at": r["endedAt"],
                        "duration_ms": r["durationMs"],
                        "error_message": r["errorMessage"],
                        "inputs": [f"{x['namespace']}/{x['name']}" for x in r["inputs"]],
                        "outputs": [f"{x['namespace']}/{x['name']}" for x in r["outputs"]],
                    }
                )
            if page >= got["pages"]:
                break
            page += 1
        return _frame(
            rows,
            ["run_id", "job", "state", "started_at", "ended_at", "duration_ms", "error_message", "inputs", "outputs"],
            times=["started_at", "ended_at"],
        )

    def incidents(self, since: Optional[Instant] = None, until: Optional[Instant] = None) -> pd.DataFrame:
        """Runs that failed or aborted (between `since` and `until`) and are still their job's
        latest run, newest first (`incidents`, every page): `run_id`, `job`, `state`, `at`,
        `error_message`, `failed_count` (tables it left FAILED) and `stale_count` (tables
        downstream left STALE)."""
        rows = []
        after: Optional[str] = None
        while True:
            p = self._field(
                "incidents",
                {"since": ("DateTime", _instant(since)), "until": ("DateTime", _instant(until)),
                 "first": ("Int", 200), "after": ("String", after)},
                "{ endCursor hasMore items { state errorMessage at failedCount staleCount run { runId }"
                " job { namespace name } } }",
            )
            for i in p["items"]:
                job = i["job"] or {}
                rows.append(
                    {
                        "run_id": i["run"]["runId"],
                        "job": f"{job.get('namespace')}/{job.get('name')}" if job else None,
                        "state": i["state"],
                        "at": i["at"],
                        "error_message": i["errorMessage"],
                        "failed_count": i["failedCount"],
                        "stale_count": i["staleCount"],
                    }
                )
            if not p["hasMore"] or not p["items"]:
                break
            after = p["endCursor"]
        return _frame(
            rows, ["run_id", "job", "state", "at", "error_message", "failed_count", "stale_count"], times=["at"]
        )

    # ---------------------------------------------------------------------------- changes

    def changes(
        self,
        since: Union[str, datetime, None] = None,
        table: Optional[TableRef] = None,
        *,
        page_size: int = 100,
        follow: bool = False,
        poll_interval: float = 1.0,
    ) -> Iterator[Change]:
        """The change log, oldest first, paging with `endCursor` (`changes`).

        `since` is a cursor this service gave (a change's `cursor`, to read on after it), or an
        instant (a `datetime` or an RFC 3339 string: the log is read from its start and the
        changes before it skipped). `table` keeps the changes touching one table. The iterator
        ends at the end of the log, or with `follow=True` waits for more, asking every
        `poll_interval` seconds.
        """
        after: Optional[str] = None
        not_before: Optional[datetime] = None
        if isinstance(since, datetime):
            not_before = since if since.tzinfo else since.replace(tzinfo=timezone.utc)
        elif isinstance(since, str) and _ISO_DATE.match(since.strip()):
            not_before = _parse_instant(since.strip())
            if not_before is not None and not_before.tzinfo is None:
                not_before = not_before.replace(tzinfo=timezone.utc)
        elif since is not None:
            after = since
        container = self._container(table, "changes").id if table is not None else None
        while True:
            p = self._field(
                "changes",
                {"after": ("String", after), "first": ("Int", page_size), "containerId": ("Int", container)},
                "{ endCursor hasMore items { cursor kind at edgeId fieldId containerIds detail } }",
            )
            for c in p["items"]:
                at = datetime.fromisoformat(c["at"].replace("Z", "+00:00"))
                if not_before is not None and at < not_before:
                    continue
                yield Change(c["cursor"], c["kind"], at, c["edgeId"], c["fieldId"], c["containerIds"], c["detail"])
            after = p["endCursor"]
            if not p["hasMore"]:
                if not follow:
                    return
                time.sleep(poll_interval)
