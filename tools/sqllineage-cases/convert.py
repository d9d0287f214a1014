#!/usr/bin/env python3
"""Converts sqllineage's SQL test suite (tests/sql/ of github.com/reata/sqllineage, MIT) into
tests/fixtures/sqllineage/cases.jsonl: one line per case its helpers assert.

It never imports sqllineage: the test modules are loaded with stand-ins for the few names they
import (`pytest`, `sqllineage.*`, `tests.helpers`), and each call of `assert_table_lineage_equal`
or `assert_column_lineage_equal` is recorded instead of run. Every `@pytest.mark.parametrize`
combination is expanded (one case per dialect); the `provider` catalog fixtures (a dummy and a
SQLAlchemy provider holding the same schema) become one case with that schema as `catalog`.
Tests that assert something else (statement counts in test_split.py) are left out.

    git clone https://github.com/reata/sqllineage /tmp/sqllineage && git -C /tmp/sqllineage checkout cc86b66
    tools/sqllineage-cases/convert.py /tmp/sqllineage [tests/fixtures/sqllineage]

writes cases.jsonl and catalog.json there.

A case: {"name", "dialect" (Tributary's), "sqllineage_dialects" (the dialects sqllineage runs
it in), "sql", "kind": "table"|"column", "sources", "targets" (table cases; a path as written,
tables as schema.table), "columns" (column cases: [source, target] pairs, `qualifier.column`, a
source with no qualifier as the bare column), "catalog" ({table: [columns]}, or "conftest" for
catalog.json, when the case has one), "env" (sqllineage settings the test sets, when any)}.
"""
import importlib.util
import itertools
import json
import os
import sys
import types

ROOT = sys.argv[1]
OUT = sys.argv[2] if len(sys.argv) > 2 else "tests/fixtures/sqllineage"
TESTS = os.path.join(ROOT, "tests")

# ---- stand-ins for the names the test modules import ----------------------------------------


class Schema:
    def __init__(self, name=None):
        self.name = name

    def __str__(self):
        return self.name or "<default>"


class Table:
    def __init__(self, name, schema=None, **kwargs):
        if schema is not None and not ("." in name and not kwargs.get("escaped")):
            self.text = f"{schema}.{name}"
        else:
            self.text = name

    def __str__(self):
        return self.text


class Path:
    def __init__(self, uri):
        self.uri = uri

    def __str__(self):
        return self.uri


class ColumnQualifierTuple(tuple):
    def __new__(cls, column, qualifier):
        return tuple.__new__(cls, (column, qualifier))


class Catalog:
    """What `generate_metadata_providers` returns: the schema, once per provider kind."""

    def __init__(self, schemas):
        self.schemas = schemas


def module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


class Param:
    def __init__(self, names, values):
        self.names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        self.values = values


def parametrize(names, values, **_):
    def deco(f):
        f.__dict__.setdefault("params", []).append(Param(names, values))
        return f

    return deco


class Fixture:
    def __init__(self, f, params):
        self.f = f
        self.params = params


def fixture(*args, **kwargs):
    def deco(f):
        return Fixture(f, kwargs.get("params"))

    if args and callable(args[0]):
        return deco(args[0])
    return deco


module("pytest", mark=types.SimpleNamespace(parametrize=parametrize), fixture=fixture)
module("sqllineage", SQLPARSE_DIALECT="non-validating", DEFAULT_DIALECT="ansi")
for name in ["sqllineage.core", "sqllineage.utils", "sqllineage.core.parser",
             "sqllineage.core.parser.sqlfluff", "sqllineage.core.parser.sqlparse"]:
    module(name)
module("sqllineage.core.models", Schema=Schema, Table=Table, Path=Path)
module("sqllineage.utils.entities", ColumnQualifierTuple=ColumnQualifierTuple)
module("sqllineage.core.metadata_provider", MetaDataProvider=object)
module("sqllineage.core.parser.sqlfluff.analyzer", SqlFluffLineageAnalyzer=object)
module("sqllineage.core.parser.sqlparse.analyzer", SqlParseLineageAnalyzer=object)

RECORDED = []


def settings():
    """sqllineage settings a test sets with @patch.dict(os.environ, ...)."""
    return {k: v for k, v in os.environ.items() if k.startswith("SQLLINEAGE_")}


def assert_table_lineage_equal(sql, source_tables=None, target_tables=None, dialect="ansi",
                               test_sqlfluff=True, test_sqlparse=True):
    RECORDED.append({"env": settings(), "kind": "table", "sql": sql, "dialect": dialect,
                     "sources": sorted(str(t) for t in (source_tables or [])),
                     "targets": sorted(str(t) for t in (target_tables or []))})


def assert_column_lineage_equal(sql, column_lineages=None, dialect="ansi", metadata_provider=None,
                                test_sqlfluff=True, test_sqlparse=True):
    def name(c):
        return c[0] if c[1] is None else f"{c[1]}.{c[0]}"

    case = {"env": settings(), "kind": "column", "sql": sql, "dialect": dialect,
            "columns": sorted([name(s), name(t)] for s, t in (column_lineages or []))}
    if isinstance(metadata_provider, Catalog):
        case["catalog"] = metadata_provider.schemas
    RECORDED.append(case)


def generate_metadata_providers(test_schemas):
    # A dummy and a SQLAlchemy provider of the same schema: one catalog here.
    return [Catalog(test_schemas)]


module("tests")
module("tests.helpers", assert_table_lineage_equal=assert_table_lineage_equal,
       assert_column_lineage_equal=assert_column_lineage_equal,
       generate_metadata_providers=generate_metadata_providers)

# ---- load and run -----------------------------------------------------------------------------


def load(path, modname):
    spec = importlib.util.spec_from_file_location(modname, path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[modname] = m
    spec.loader.exec_module(m)
    return m


conftest = load(os.path.join(TESTS, "conftest.py"), "tests.conftest")
FIXTURES = {"provider": conftest.provider.params}


def package(path):
    """Dotted name of a file under tests/ for relative imports."""
    rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
    parts = rel.split(".")
    for i in range(1, len(parts)):
        name = ".".join(parts[:i])
        if name not in sys.modules:
            module(name)
        sys.modules[name].__path__ = []
    return rel


SQLLINEAGE_ENV = [k for k in os.environ if k.startswith("SQLLINEAGE_")]
for k in SQLLINEAGE_ENV:
    del os.environ[k]

out = []
files = []
for d, _, fs in os.walk(os.path.join(TESTS, "sql")):
    files += [os.path.join(d, f) for f in fs if f.startswith("test_") and f.endswith(".py")]
for path in sorted(files):
    m = load(path, package(path))
    stem = os.path.relpath(path, os.path.join(TESTS, "sql"))[:-3].replace(os.sep, "/")
    for fname, f in sorted(vars(m).items()):
        if not (fname.startswith("test_") and callable(f)):
            continue
        inner = f
        while hasattr(inner, "__wrapped__"):
            inner = inner.__wrapped__
        argnames = inner.__code__.co_varnames[: inner.__code__.co_argcount]
        # Each parametrize (and fixture) is one axis; the cases are their product.
        axes = []
        for p in reversed(getattr(inner, "params", []) + getattr(f, "params", [])):
            rows = [v if len(p.names) > 1 else (v,) for v in p.values]
            axes.append([dict(zip(p.names, r)) for r in rows])
        given = {k for a in axes for k in a[0]}
        for a in argnames:
            if a not in given and a in FIXTURES:
                axes.append([{a: v} for v in FIXTURES[a]])
        for combo in itertools.product(*axes):
            kwargs = {k: v for d in combo for k, v in d.items()}
            if any(not isinstance(v, (str, Catalog)) for v in kwargs.values()):
                continue  # analyzer classes: not a lineage assertion
            before = len(RECORDED)
            env_before = dict(os.environ)
            f(**kwargs)
            label = ",".join(v for v in kwargs.values() if isinstance(v, str))
            new = RECORDED[before:]
            for i, case in enumerate(new):
                case["sqllineage_dialect"] = case["dialect"]
                name = f"{stem}::{fname}" + (f"[{label}]" if label else "") + (f"#{i + 1}" if len(new) > 1 else "")
                rec = {"name": name}
                rec.update(case)
                out.append(rec)
            # patch.dict restores os.environ; what it set is seen through the wrapper only.
            assert dict(os.environ) == env_before

# sqllineage runs a case once per dialect it lists; Tributary has fewer dialects, so a case is
# kept once per Tributary dialect (the first test name that asserts it), with the sqllineage
# dialects it stands for. Dialects Tributary has no parser for run as `ansi`.
TRIBUTARY = {"databricks": "sparksql", "greenplum": "postgres", "materialize": "postgres",
             "athena": "trino", "duckdb": "ansi", "db2": "ansi", "teradata": "ansi",
             "exasol": "ansi", "vertica": "ansi", "non-validating": "ansi"}
kept = {}
names = set()
for rec in out:
    rec["dialect"] = TRIBUTARY.get(rec["dialect"], rec["dialect"])
    key = json.dumps({k: v for k, v in rec.items() if k not in ("name", "sqllineage_dialect")}, sort_keys=True)
    if key in kept:
        if rec["sqllineage_dialect"] not in kept[key]["sqllineage_dialects"]:
            kept[key]["sqllineage_dialects"].append(rec["sqllineage_dialect"])
        continue
    name = rec["name"]
    n = 2
    while name in names:
        name, n = f"{rec['name']}~{n}", n + 1
    names.add(name)
    case = {"name": name, "dialect": rec["dialect"], "sqllineage_dialects": [rec["sqllineage_dialect"]]}
    case.update({k: v for k, v in rec.items() if k not in ("name", "dialect", "sqllineage_dialect", "env") or (k == "env" and v)})
    kept[key] = case

# The shared schema of conftest.py's `provider` fixture is written once, as catalog.json; a case
# using it says "catalog": "conftest".
shared = conftest._data_warehouse_schemas
with open(os.path.join(OUT, "catalog.json"), "w") as f:
    json.dump(shared, f, indent=1)
    f.write("\n")
with open(os.path.join(OUT, "cases.jsonl"), "w") as f:
    for case in kept.values():
        if case.get("catalog") == shared:
            case["catalog"] = "conftest"
        f.write(json.dumps(case, ensure_ascii=False) + "\n")
print(f"{len(out)} assertions, {len(kept)} cases", file=sys.stderr)
