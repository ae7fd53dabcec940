"""v4 tables never strand a client (docs/column-files.md, "Who can read a
v4 table"), through real PyIceberg 0.12 and DuckDB 1.5.5:

- PyIceberg's create_table with format-version 4 gets the catalog's clear
  refusal, leaves no table behind, and a retry gets the same refusal (not
  AlreadyExists);
- PyIceberg's load_table and DuckDB's SELECT of a v4 table show the
  refusal's hint instead of failing in their metadata parsers;
- a v2 table with PyIceberg-written snapshots goes to v4 in one commit
  (over HTTP with X-Iceberg-Column-Files: true) and reads back through
  server-side planning with every row and a row id for each;
- v1-v3 tables create, load and commit from PyIceberg as before.
"""
import os
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from restcall import V4, request

URI = os.environ["CATALOG_URI"]
WH = os.environ["CATALOG_WAREHOUSE"]
HINT = "pip install ./clients/python"
REASON = "format-version-4-unsupported-by-client"


def call(method, path, body=None, v4=True):
    return request(method, f"{URI}/v1/{WH}{path}", body, V4 if v4 else None)


def schema():
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType
    return Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "label", StringType(), required=False))


def v4_table(ns, name="wide"):
    """A v4 table created over HTTP by a client that reads v4."""
    body = {"name": name, "schema": {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": False}]}, "properties": {"format-version": "4"}}
    st, _, res = call("POST", f"/namespaces/{ns}/tables", body)
    assert st == 200, res
    return name


def test_pyiceberg_create_v4_refused_nothing_left(catalog, ns):
    from pyiceberg.exceptions import BadRequestError
    for _ in range(2):  # the retry gets the same answer, not AlreadyExists
        with pytest.raises(BadRequestError) as e:
            catalog.create_table(f"{ns}.v4", schema=schema(), properties={"format-version": "4"})
        assert HINT in str(e.value) and "format version 4" in str(e.value), e.value
        assert catalog.list_tables(ns) == [], "no half-created table"
    # A staged create (create_table_transaction) is refused the same way.
    with pytest.raises(BadRequestError) as e:
        catalog.create_table_transaction(f"{ns}.v4", schema=schema(), properties={"format-version": "4"}).commit_transaction()
    assert HINT in str(e.value), e.value
    assert catalog.list_tables(ns) == []


def test_pyiceberg_load_v4_refused(catalog, ns):
    from pyiceberg.exceptions import BadRequestError
    name = v4_table(ns)
    with pytest.raises(BadRequestError) as e:
        catalog.load_table(f"{ns}.{name}")
    assert HINT in str(e.value), e.value
    assert "pydantic" not in str(e.value).lower()
    # Exists, list and drop keep working for every client.
    assert catalog.table_exists(f"{ns}.{name}")
    assert (ns, name) in catalog.list_tables(ns)
    st, _, res = call("GET", f"/namespaces/{ns}/tables/{name}", v4=False)
    assert st == 400 and res["error"]["type"] == "BadRequestException" and res["error"]["reason"] == REASON, res
    catalog.drop_table(f"{ns}.{name}")
    assert not catalog.table_exists(f"{ns}.{name}")


def test_duckdb_select_v4_shows_hint(catalog, ns, catalog_uri, warehouse):
    import duckdb
    from test_duckdb import extension_file
    name = v4_table(ns)
    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    try:
        for ext in ("avro", "httpfs", "iceberg"):
            con.execute(f"LOAD '{extension_file(ext)}'")
        con.execute(f"ATTACH '{warehouse}' AS lake (TYPE iceberg, ENDPOINT '{catalog_uri}', AUTHORIZATION_TYPE 'none')")
        with pytest.raises(duckdb.Error) as e:
            con.execute(f"SELECT * FROM lake.{ns}.{name}").fetchall()
        msg = str(e.value)
        assert "manifest-list" not in msg, msg
        assert HINT in msg or REASON in msg, msg
    finally:
        con.close()


def rows_from_plan(ns, name):
    """Every row of the current snapshot through POST /plan with the
    header: (id, label, _row_id = first-row-id + position)."""
    st, _, res = call("POST", f"/namespaces/{ns}/tables/{name}/plan", {})
    assert st == 200 and res["status"] == "completed", res
    assert not res.get("delete-files"), "no deletes in this table"
    out = []
    for task in res["file-scan-tasks"]:
        df = task["data-file"]
        assert df.get("first-row-id") is not None, df
        t = pq.read_table(df["file-path"].removeprefix("file://"))
        for i, r in enumerate(t.to_pylist()):
            out.append((r["id"], r["label"], df["first-row-id"] + i))
    return out


def test_v2_with_pyiceberg_snapshots_to_v4_in_one_commit(catalog, ns):
    tbl = catalog.create_table(f"{ns}.old", schema=schema(), properties={"format-version": "2"})
    arrow = pa.schema([pa.field("id", pa.int64()), pa.field("label", pa.string())])
    tbl.append(pa.table({"id": [1, 2, 3], "label": ["a", "b", "c"]}, schema=arrow))
    tbl.append(pa.table({"id": [4, 5], "label": ["d", "e"]}, schema=arrow))
    want = sorted((r["id"], r["label"]) for r in catalog.load_table(f"{ns}.old").scan().to_arrow().to_pylist())
    assert len(want) == 5

    # Without the header the upgrade is refused and changes nothing.
    up = {"requirements": [], "updates": [{"action": "upgrade-format-version", "format-version": 4}]}
    st, _, res = call("POST", f"/namespaces/{ns}/tables/old", up, v4=False)
    assert st == 400 and res["error"]["reason"] == REASON, res
    assert catalog.load_table(f"{ns}.old").format_version == 2

    st, headers, res = call("POST", f"/namespaces/{ns}/tables/old", up)
    assert st == 200, res
    assert res["metadata"]["format-version"] == 4
    assert res["metadata"]["next-row-id"] == 5
    warning = headers.get("Warning", "")
    assert warning.startswith('299 - "') and "no downgrade" in warning, warning

    got = rows_from_plan(ns, "old")
    assert sorted((i, lbl) for i, lbl, _ in got) == want
    assert sorted(rid for _, _, rid in got) == list(range(5)), "one row id each, 0..4"


@pytest.mark.parametrize("version", ["1", "2"])
def test_v1_v2_unchanged(catalog, ns, version):
    tbl = catalog.create_table(f"{ns}.t{version}", schema=schema(), properties={"format-version": version})
    arrow = pa.schema([pa.field("id", pa.int64()), pa.field("label", pa.string())])
    tbl.append(pa.table({"id": [1, 2], "label": ["x", "y"]}, schema=arrow))
    with tbl.transaction() as tx:
        tx.set_properties(owner="guard-test")
    loaded = catalog.load_table(f"{ns}.t{version}")
    assert loaded.format_version == int(version)
    assert loaded.properties["owner"] == "guard-test"
    assert loaded.scan().to_arrow().num_rows == 2


def test_v3_unchanged(catalog, ns):
    """PyIceberg 0.12 cannot write v3; a v3 table made over HTTP still
    loads and takes property commits from it."""
    tbl = catalog.create_table(f"{ns}.t3", schema=schema(), properties={"format-version": "2"})
    st, _, res = call("POST", f"/namespaces/{ns}/tables/t3",
                      {"requirements": [], "updates": [{"action": "upgrade-format-version", "format-version": 3}]}, v4=False)
    assert st == 200, res
    tbl = catalog.load_table(f"{ns}.t3")
    assert tbl.format_version == 3
    with tbl.transaction() as tx:
        tx.set_properties(k="v")
    assert catalog.load_table(f"{ns}.t3").properties["k"] == "v"
    assert uuid.UUID(str(tbl.metadata.table_uuid))
