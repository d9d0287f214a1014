"""SQL lineage vs peers: the case corpus through Tributary, sqllineage and sqlglot.

Run through scripts/sql-peers, which makes the venv and builds the binary. Every case of
tests/fixtures/sql/*.jsonl goes, as one call, through

- Tributary: `tributary analyze-sql` (the answer of GraphQL analyzeSql), all cases of a dialect
  in one process; its own in-process rate is the statements/s reported;
- sqllineage: LineageRunner with the dialect, source/target tables and get_column_lineage();
- sqlglot: parse, tables by node type, sqlglot.lineage.lineage() per output column of each
  statement's query; derived = some node of the column's lineage is not a bare column.

The same scoring for all three, per case (a case is one call, possibly several statements):

- tables: the set of tables written and the set read (minus those written in the same case)
  equal the expected ones; a peer's intermediate tables count as written;
- columns: the map target column -> set of source columns equals the expected one, for the
  columns of tables that outlive the call (a temporary table's own columns are left out: the
  peers do not report them, and its readers' columns already show where its data came from);
  columns without sources (literals, COUNT(*)) are left out, a `*` source is no source and a
  column is never its own source, for every tool; only cases expecting some column lineage count;
- derived: over every expected target column with sources, the tool reports that column with
  the same derived flag (sqllineage has no such flag: n/a).

Names are normalised the same way for everyone: lower case, quotes removed, a 1-part table name
given `schema.` then `database.` from the case's defaults, a 2-part name `database.`; external
locations (paths, stages) are not tables. Statements/s is the time spent inside each tool's
analysis only, over all input statements.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")

SQLLINEAGE_DIALECT = {
    "postgres": "postgres", "redshift": "redshift", "mysql": "mysql", "mariadb": "mariadb",
    "snowflake": "snowflake", "bigquery": "bigquery", "tsql": "tsql", "sparksql": "sparksql",
    "hive": "hive", "oracle": "oracle", "trino": "trino", "ansi": "ansi",
}
SQLGLOT_DIALECT = {
    "postgres": "postgres", "redshift": "redshift", "mysql": "mysql", "mariadb": "mysql",
    "snowflake": "snowflake", "bigquery": "bigquery", "tsql": "tsql", "sparksql": "spark",
    "hive": "hive", "oracle": "oracle", "trino": "trino", "ansi": None,
}
ALIASES = {"postgresql": "postgres", "pg": "postgres", "mssql": "tsql", "sqlserver": "tsql", "spark": "sparksql",
           "databricks": "sparksql", "presto": "trino", "generic": "ansi"}
CASE_TIMEOUT_S = 20


class Timeout(Exception):
    pass


def _alarm(_sig, _frame):
    raise Timeout()


def strip(part: str) -> str:
    part = part.strip()
    if len(part) >= 2 and part[0] in "\"`[" and part[-1] in "\"`]":
        part = part[1:-1]
    return part.lower()


def qualify(name: str, db: str | None, schema: str | None) -> str:
    parts = [strip(p) for p in split_name(name) if p != ""]
    if parts and (parts[0].startswith("#") or parts[0].startswith("@")):
        return ".".join(parts)
    if len(parts) == 1:
        parts = [p for p in (db, schema) if p] + parts if schema else [p for p in (db,) if p] + parts
    elif len(parts) == 2 and db:
        parts = [db] + parts
    return ".".join(p.lower() for p in parts)


def split_name(name: str) -> list[str]:
    """Dots outside quotes."""
    out, cur, quote = [], "", None
    for ch in name:
        if quote:
            cur += ch
            if ch == quote:
                quote = None
        elif ch in "\"`[":
            quote = "]" if ch == "[" else ch
            cur += ch
        elif ch == ".":
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    # A back-quoted `project.dataset.table` is three parts.
    flat = []
    for p in out:
        if p.startswith("`") and p.endswith("`") and "." in p:
            flat.extend(p[1:-1].split("."))
        else:
            flat.append(p)
    return flat


def split_column(col: str) -> tuple[str, str]:
    parts = split_name(col)
    return ".".join(parts[:-1]), parts[-1]


def norm_col(col: str, db, schema) -> str:
    table, c = split_column(col)
    return f"{qualify(table, db, schema)}.{strip(c)}" if table else strip(c)


class Answer:
    """One tool's answer for one case."""

    def __init__(self):
        self.targets: set[str] = set()
        self.sources: set[str] = set()
        self.columns: dict[str, set[str]] = {}
        self.derived: dict[str, bool] = {}
        self.failed = False

    def add_col(self, target: str, sources, derived):
        # A column is not its own source (a self-insert keeps a column's lineage): for everyone.
        # `count(*)` reads no particular column: a `*` source is none, for everyone.
        self.columns.setdefault(target, set()).update(
            s for s in sources if s != target and not s.endswith(".*") and s != "*")
        if derived is not None:
            self.derived[target] = self.derived.get(target, False) or derived

    def chain_through(self, collapsed: set[str], written: list[tuple[str, str, set[str], bool]]):
        """Statement-at-a-time analysers (sqlglot) name the columns of a table written earlier in
        the call; where the contract collapses that table (temporary, dropped, a view), follow
        its columns to theirs, as a user chaining per-statement answers would."""
        known: dict[str, tuple[set[str], bool]] = {}
        for target, _table, sources, derived in written:
            expanded, d = set(), derived
            for src in sources:
                table = src.rsplit(".", 1)[0]
                if table in collapsed and src in known:
                    expanded |= known[src][0]
                    d = d or known[src][1]
                else:
                    expanded.add(src)
            known[target] = (known.get(target, (set(), False))[0] | expanded, known.get(target, (set(), False))[1] or d)
        for target, (sources, derived) in known.items():
            self.add_col(target, sources, derived)

    def tables(self):
        return frozenset(self.targets), frozenset(self.sources - self.targets)


def load_corpus(root: Path):
    cases = []
    for f in sorted((root / "tests/fixtures/sql").glob("*.jsonl")):
        for line in f.read_text().splitlines():
            line = line.strip()
            if not line or line.startswith("//"):
                continue
            v = json.loads(line)
            statements = [v["sql"]] if isinstance(v.get("sql"), str) else list(v["statements"])
            expect = v["expect"] if isinstance(v.get("expect"), list) else [v]
            db = v.get("default_database")
            schema = v.get("default_schema")
            ans = Answer()
            for e in expect:
                ans.targets.update(qualify(t, db, schema) for t in e.get("targets", []))
                ans.sources.update(qualify(t, db, schema) for t in e.get("sources", []))
                for c in e.get("columns", []):
                    if c["sources"]:
                        ans.add_col(norm_col(c["target"], db, schema),
                                    [norm_col(s, db, schema) for s in c["sources"]], c["derived"])
            # Tables the contract collapses: written in the call, read later in it, yet never
            # reported as a source (temporary tables, tables dropped before the call ends).
            read = {qualify(t, db, schema) for e in expect for t in e.get("sources", [])}
            collapsed = set()
            for e in expect:
                for t in e.get("targets", []):
                    q = qualify(t, db, schema)
                    last = strip(split_name(t)[-1])
                    later = " ".join(statements[1:]).lower() if len(statements) > 1 else ""
                    read_later = e.get("intermediate") or re.search(rf"\b{re.escape(last)}\b", later)
                    if q not in read and read_later:
                        collapsed.add(q)
            cases.append({
                "file": f.stem, "name": v["name"],
                "dialect": ALIASES.get(v.get("dialect", f.stem).lower(), v.get("dialect", f.stem).lower()),
                "statements": statements, "db": db and db.lower(), "schema": schema and schema.lower(),
                "catalog": v.get("catalog") or {}, "expect": ans, "collapsed": collapsed,
                "raw": {k: v[k] for k in ("default_database", "default_schema", "catalog") if k in v},
            })
    return cases


# ---- Tributary ----

def run_tributary(binary: str, cases) -> tuple[list[Answer], float]:
    answers: list[Answer | None] = [None] * len(cases)
    spent = 0.0
    by_dialect: dict[str, list[int]] = {}
    for i, c in enumerate(cases):
        by_dialect.setdefault(c["dialect"], []).append(i)
    for dialect, idx in by_dialect.items():
        lines = "".join(json.dumps({"statements": cases[i]["statements"], **cases[i]["raw"]}) + "\n" for i in idx)
        p = subprocess.run([binary, "analyze-sql", "--dialect", dialect], input=lines, capture_output=True,
                           text=True, check=True, env={**os.environ, "RUST_LOG": "error"})
        for line in p.stderr.splitlines():
            if line.startswith("analyze-sql:"):
                spent += float(line.split(" in ")[1].split(" s ")[0])
        for i, out in zip(idx, p.stdout.splitlines()):
            c, a = cases[i], Answer()
            db, schema = c["db"], c["schema"]
            for e in json.loads(out):
                a.targets.update(qualify(t, db, schema) for t in e["targets"])
                a.sources.update(qualify(t, db, schema) for t in e["sources"])
                a.failed |= bool(e["errors"])
                for col in e["columns"]:
                    if col["sources"]:
                        a.add_col(norm_col(col["target"], db, schema),
                                  [norm_col(s, db, schema) for s in col["sources"]], col["derived"])
            answers[i] = a
    return answers, spent


# ---- sqllineage ----

def run_sqllineage(cases) -> tuple[list[Answer], float]:
    from sqllineage.core.metadata.dummy import DummyMetaDataProvider
    from sqllineage.core.models import Table
    from sqllineage.runner import LineageRunner

    def tname(t, db, schema):
        s = str(t.schema)
        name = t.raw_name if s == "<default>" else f"{s}.{t.raw_name}"
        return qualify(name, db, schema)

    # One-time loading (sqlfluff's dialect grammars) is not analysis: warm up, untimed.
    for d in sorted({c["dialect"] for c in cases}):
        try:
            LineageRunner("INSERT INTO x SELECT a FROM y", dialect=SQLLINEAGE_DIALECT[d]).get_column_lineage()
        except Exception:
            pass
    answers, spent = [], 0.0
    for c in cases:
        a, db, schema = Answer(), c["db"], c["schema"]
        meta = {k.lower(): [x.lower() for x in v] for k, v in c["catalog"].items()}
        sql = ";\n".join(s.rstrip().rstrip(";") for s in c["statements"]) + ";"
        start = time.perf_counter()
        signal.alarm(CASE_TIMEOUT_S)
        try:
            r = LineageRunner(sql, dialect=SQLLINEAGE_DIALECT[c["dialect"]], silent_mode=True,
                              metadata_provider=DummyMetaDataProvider(meta))
            srcs, tgts, mids = r.source_tables, r.target_tables, r.intermediate_tables
            paths = r.get_column_lineage()
        except (Exception, Timeout):
            srcs, tgts, mids, paths = [], [], [], []
            a.failed = True
        finally:
            signal.alarm(0)
        spent += time.perf_counter() - start
        a.sources = {tname(t, db, schema) for t in srcs if isinstance(t, Table)}
        a.targets = {tname(t, db, schema) for t in list(tgts) + list(mids) if isinstance(t, Table)}
        for path in paths:
            tgt, src = path[-1], path[0]
            if not isinstance(tgt.parent, Table) or not isinstance(src.parent, Table):
                continue
            a.add_col(f"{tname(tgt.parent, db, schema)}.{strip(tgt.raw_name)}",
                      [f"{tname(src.parent, db, schema)}.{strip(src.raw_name)}"], None)
        answers.append(a)
    return answers, spent


# ---- sqlglot ----

def run_sqlglot(cases) -> tuple[list[Answer], float]:
    import sqlglot
    from sqlglot import exp
    from sqlglot.lineage import lineage

    def tname(t: exp.Table, db, schema) -> str:
        parts = [p for p in (t.catalog, t.db, t.name) if p]
        return qualify(".".join(parts), db, schema)

    def schema_of(catalog):
        # sqlglot wants every table name at one depth: nest by parts, skip the odd ones.
        out, depth = {}, None
        for k, cols in catalog.items():
            parts = k.lower().split(".")
            if depth is None:
                depth = len(parts)
            if len(parts) != depth:
                continue
            d = out
            for p in parts[:-1]:
                d = d.setdefault(p, {})
            d[parts[-1]] = {col.lower(): "text" for col in cols}
        return out

    def target_of(st):
        """(target table, column names or None, query) of a writing statement."""
        if isinstance(st, exp.Insert):
            this = st.this
            cols = None
            if isinstance(this, exp.Schema):
                cols = [e.name for e in this.expressions]
                this = this.this
            return (this if isinstance(this, exp.Table) else None), cols, st.expression
        if isinstance(st, exp.Create):
            this = st.this
            cols = None
            if isinstance(this, exp.Schema):
                cols = [e.name for e in this.expressions if isinstance(e, (exp.ColumnDef, exp.Identifier))] or None
                this = this.this
            q = st.expression if isinstance(st.expression, exp.Query) else None
            return (this if isinstance(this, exp.Table) else None), cols, q
        if isinstance(st, (exp.Merge, exp.Update, exp.Delete)):
            return (st.this if isinstance(st.this, exp.Table) else None), None, None
        if isinstance(st, exp.Copy) and st.args.get("kind"):
            return (st.this if isinstance(st.this, exp.Table) else None), None, None
        if isinstance(st, exp.LoadData):
            return (st.this if isinstance(st.this, exp.Table) else None), None, None
        if isinstance(st, exp.Select) and st.args.get("into"):
            into = st.args["into"]
            q = st.copy()
            q.set("into", None)
            return into.this if isinstance(into.this, exp.Table) else None, None, q
        return None, None, None

    for d in sorted({SQLGLOT_DIALECT[c["dialect"]] or "" for c in cases}):
        try:
            lineage(None, sqlglot.parse_one("SELECT a FROM y", read=d or None), schema={}, dialect=d or None)
        except Exception:
            pass
    answers, spent = [], 0.0
    for c in cases:
        a, db, schema = Answer(), c["db"], c["schema"]
        d = SQLGLOT_DIALECT[c["dialect"]]
        sg_schema = schema_of(c["catalog"])
        start = time.perf_counter()
        signal.alarm(CASE_TIMEOUT_S)
        results = []
        try:
            for text in c["statements"]:
                try:
                    stmts = sqlglot.parse(text, read=d)
                except Exception:
                    a.failed = True
                    continue
                for st in stmts:
                    if st is None or isinstance(st, (exp.Use, exp.Command)):
                        continue
                    target, cols, query = target_of(st)
                    ctes = {cte.alias_or_name.lower() for cte in st.find_all(exp.CTE)}
                    # Stages and paths are locations, not tables, for every tool.
                    tables = [t for t in st.find_all(exp.Table)
                              if t.name and not t.name.startswith("@") and "://" not in t.name
                              and not (not t.db and t.name.lower() in ctes)]
                    col_lins = []
                    if target is not None and query is not None:
                        try:
                            nodes = lineage(None, query, schema=sg_schema, dialect=d)
                            names = list(nodes)
                            if not cols and isinstance(st, exp.Insert):
                                # Without a column list the catalog's order names the columns.
                                key = tname(target, db, schema)
                                cols = next((v for k, v in c["catalog"].items() if k.lower() == key), None)
                            if cols:
                                names = cols[:len(nodes)]
                            for name, node in zip(names, nodes.values()):
                                srcs, derived = [], False
                                for n in node.walk():
                                    if isinstance(n.expression, exp.Table):
                                        srcs.append((n.expression, n.name.split(".")[-1]))
                                    elif not isinstance(n.expression.unalias(), exp.Column):
                                        derived = True
                                col_lins.append((name, srcs, derived))
                        except Exception:
                            pass
                    results.append((target, tables, col_lins))
        except Timeout:
            a.failed = True
        finally:
            signal.alarm(0)
        spent += time.perf_counter() - start
        written = []
        for target, tables, col_lins in results:
            tgt = tname(target, db, schema) if target is not None else None
            if tgt:
                a.targets.add(tgt)
            for t in tables:
                n = tname(t, db, schema)
                if n != tgt:
                    a.sources.add(n)
            for name, srcs, derived in col_lins:
                if srcs:
                    written.append((f"{tgt}.{strip(name)}", tgt,
                                    {f"{tname(t, db, schema)}.{strip(col)}" for t, col in srcs}, derived))
        a.chain_through(c["collapsed"], written)
        answers.append(a)
    return answers, spent


# ---- scoring ----

def final_columns(columns: dict, collapsed: set) -> dict:
    """Columns with sources, of tables that outlive the call (not the collapsed temporaries)."""
    return {k: v for k, v in columns.items() if v and k.rsplit(".", 1)[0] not in collapsed}


def score(cases, answers):
    table_ok = col_ok = col_cases = der_ok = der_total = 0
    for c, a in zip(cases, answers):
        e = c["expect"]
        table_ok += e.tables() == a.tables()
        want = final_columns(e.columns, c["collapsed"])
        if want:
            col_cases += 1
            col_ok += want == final_columns(a.columns, c["collapsed"])
        for k in want:
            der_total += 1
            der_ok += a.derived.get(k) == e.derived[k] and bool(a.columns.get(k))
    return table_ok, col_ok, col_cases, der_ok, der_total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[2]))
    ap.add_argument("--binary", required=True)
    ap.add_argument("--only", help="comma-separated tools (tributary,sqllineage,sqlglot)")
    ap.add_argument("--show-misses", metavar="TOOL", help="print the cases TOOL gets wrong")
    args = ap.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    cases = load_corpus(Path(args.root))
    n_stmts = sum(len(c["statements"]) for c in cases)
    tools = (args.only or "tributary,sqllineage,sqlglot").split(",")
    runs = {}
    for tool in tools:
        if tool == "tributary":
            runs[tool] = run_tributary(args.binary, cases)
        elif tool == "sqllineage":
            runs[tool] = run_sqllineage(cases)
        elif tool == "sqlglot":
            runs[tool] = run_sqlglot(cases)
        print(f"  ran {tool}", file=sys.stderr)
    print(f"SQL lineage vs peers: {len(cases)} cases, {n_stmts} statements "
          f"(tests/fixtures/sql, {len({c['file'] for c in cases})} dialects)")
    print(f"{'tool':<11} {'tables':>16} {'columns':>16} {'derived':>18} {'stmt/s':>10}")
    rates = {}
    for tool, (answers, spent) in runs.items():
        t, co, cc, do, dt = score(cases, answers)
        rate = n_stmts / spent if spent > 0 else float("inf")
        rates[tool] = rate
        derived = "n/a" if tool == "sqllineage" else f"{do}/{dt} {100 * do / max(dt, 1):5.1f}%"
        print(f"{tool:<11} {t:>4}/{len(cases):<4} {100 * t / len(cases):5.1f}% "
              f"{co:>4}/{cc:<4} {100 * co / max(cc, 1):5.1f}% {derived:>18} {rate:>10.0f}")
    if "tributary" in rates:
        for tool, rate in rates.items():
            if tool != "tributary":
                print(f"speed ratio tributary/{tool}: {rates['tributary'] / rate:.0f}x")
    if args.show_misses and args.show_misses in runs:
        answers, _ = runs[args.show_misses]
        for c, a in zip(cases, answers):
            e = c["expect"]
            want = final_columns(e.columns, c["collapsed"])
            if e.tables() != a.tables() or want != final_columns(a.columns, c["collapsed"]):
                print(f"MISS {c['file']}/{c['name']}\n  want {e.tables()} {e.columns}\n  got  {a.tables()} {a.columns}")


if __name__ == "__main__":
    main()
