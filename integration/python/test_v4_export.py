"""The way back from v4, read by the engines v4 strands.

Spark 4.1 (iceberg-spark-runtime 1.12.0) writes a partitioned v3 table and
deletes rows merge-on-read (deletion vectors); it is upgraded to format 4
over plain HTTP, and one base file gets a column file for `score` (written
with pyarrow, committed through /column-files). Exported with
`compact: true` to format 3, the new table is read by Spark, PyIceberg 0.12
and DuckDB 1.5.5: the rows equal Spark's rows before the upgrade with the
column update applied, and Spark's `_row_id` of every row is the one it had
before the upgrade (row lineage survives the upgrade, the column update,
compaction and the export). A second export to format 2 (deletion vectors
folded first) reads back the same rows.
"""
import os
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from restcall import V4, request

URI = os.environ["CATALOG_URI"]
WH = os.environ["CATALOG_WAREHOUSE"]

pyspark = pytest.importorskip("pyspark")
from pyspark.sql import SparkSession  # noqa: E402


def call(method, path, body=None):
    status, _, data = request(method, f"{URI}/v1/{WH}{path}", body, V4)
    return status, data


def local(loc):
    return loc.removeprefix("file://") if loc.startswith("file://") else loc.removeprefix("file:")


@pytest.fixture(scope="module")
def spark(catalog_uri, warehouse):
    s = (
        SparkSession.builder.master("local[2]")
        .appName("lakehold-v4-export")
        .config("spark.jars", os.environ["SPARK_JARS"])
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.lake", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.lake.type", "rest")
        .config("spark.sql.catalog.lake.uri", catalog_uri)
        .config("spark.sql.catalog.lake.warehouse", warehouse)
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )
    yield s
    s.stop()


def duckdb_rows(catalog_uri, warehouse, table):
    import glob
    import importlib

    import duckdb

    def ext(name):
        pkg = importlib.import_module(f"duckdb_extension_{name}")
        (path,) = glob.glob(os.path.join(os.path.dirname(pkg.__file__), "extensions", "*", f"{name}.duckdb_extension"))
        return path

    c = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    try:
        for e in ("avro", "httpfs", "iceberg"):
            c.execute(f"LOAD '{ext(e)}'")
        c.execute(f"ATTACH '{warehouse}' AS lake (TYPE iceberg, ENDPOINT '{catalog_uri}', AUTHORIZATION_TYPE 'none')")
        return sorted(c.execute(f"SELECT id, v, score FROM lake.{table}").fetchall())
    finally:
        c.close()


def update_one_base(ns, table, table_loc):
    """Writes a column file for `score` (= id * 10) over the first base
    file the v4 plan returns and commits it; the ids it updated."""
    st, res = call("POST", f"/namespaces/{ns}/tables/{table}/plan", {})
    assert st == 200, res
    task = sorted(res["file-scan-tasks"], key=lambda t: t["data-file"]["file-path"])[0]
    base = task["data-file"]
    ids = pq.read_table(local(base["file-path"]), columns=["id"]).column("id").to_pylist()
    path = f"{table_loc}/data/score-{uuid.uuid4().hex[:8]}.parquet"
    os.makedirs(os.path.dirname(local(path)), exist_ok=True)
    schema = pa.schema([pa.field("score", pa.float64(), True, {b"PARQUET:field_id": b"3"})])
    pq.write_table(pa.table({"score": pa.array([i * 10.0 for i in ids], pa.float64())}, schema=schema), local(path))
    st, res = call("POST", f"/namespaces/{ns}/tables/{table}/column-files", {"column-files": [
        {"data-file": base["file-path"], "location": path, "file-format": "parquet", "field-ids": [3],
         "file-size-in-bytes": os.path.getsize(local(path)), "record-count": base["record-count"]}]})
    assert st == 200, res
    return set(ids), res["metadata"]["snapshots"][-1]["sequence-number"]


def test_export_read_by_spark_pyiceberg_duckdb(spark, catalog, catalog_uri, warehouse):
    ns = "exp_" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE NAMESPACE lake.{ns}")
    t = f"lake.{ns}.src"
    spark.sql(f"""CREATE TABLE {t} (id BIGINT, v STRING, score DOUBLE) USING iceberg PARTITIONED BY (bucket(4, id))
        TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')""")
    spark.sql(f"INSERT INTO {t} SELECT id, concat('v', id), 1.0 FROM range(0, 40)")
    spark.sql(f"INSERT INTO {t} SELECT id, concat('w', id), 2.0 FROM range(40, 60)")
    spark.sql(f"DELETE FROM {t} WHERE id % 7 = 0")
    assert spark.sql(f"SELECT count(*) FROM {t}.delete_files WHERE file_format = 'PUFFIN'").collect()[0][0] > 0
    before = {r.id: r for r in spark.sql(f"SELECT id, v, score, _row_id, _last_updated_sequence_number FROM {t}").collect()}
    assert len(before) == 60 - 9

    st, res = call("POST", f"/namespaces/{ns}/tables/src",
                   {"requirements": [], "updates": [{"action": "upgrade-format-version", "format-version": 4}]})
    assert st == 200, res
    updated, seq = update_one_base(ns, "src", res["metadata"]["location"])
    assert updated
    want = sorted((i, r.v, i * 10.0 if i in updated else r.score) for i, r in before.items())

    dest = {"destination": {"namespace": [ns], "name": "back"}}
    st, res = call("POST", f"/namespaces/{ns}/tables/src/export", dest)
    assert st == 400 and res["error"]["reason"] == "column-files-pending", res
    src_snapshot = call("GET", f"/namespaces/{ns}/tables/src")[1]["metadata"]["current-snapshot-id"]
    st, res = call("POST", f"/namespaces/{ns}/tables/src/export", {**dest, "compact": True})
    assert st == 200, res
    assert res["metadata"]["format-version"] == 3
    assert call("GET", f"/namespaces/{ns}/tables/src")[1]["metadata"]["current-snapshot-id"] == src_snapshot, \
        "the export folds into the new table, not the source"

    spark.sql(f"REFRESH TABLE lake.{ns}.back")
    rows = spark.sql(f"SELECT id, v, score, _row_id, _last_updated_sequence_number FROM lake.{ns}.back").collect()
    assert sorted((r.id, r.v, r.score) for r in rows) == want
    for r in rows:
        assert r._row_id == before[r.id]._row_id, f"row {r.id} keeps its _row_id"
        if r.id in updated:
            assert r._last_updated_sequence_number == seq, "an updated row carries the update's sequence number"
        else:
            assert r._last_updated_sequence_number == before[r.id]._last_updated_sequence_number

    got = catalog.load_table(f"{ns}.back").scan().to_arrow()
    assert sorted(zip(*(got.column(c).to_pylist() for c in ("id", "v", "score")))) == want
    assert duckdb_rows(catalog_uri, warehouse, f"{ns}.back") == want

    # The export folded into the new table only: the source keeps its
    # column files (and so still refuses a plain export). Format 2 has no
    # deletion vectors either: with compact they are folded in too.
    st, res = call("POST", f"/namespaces/{ns}/tables/src/export",
                   {"destination": {"namespace": [ns], "name": "back2"}, "format-version": 2})
    assert st == 400 and res["error"]["reason"] == "column-files-pending", res
    st, res = call("POST", f"/namespaces/{ns}/tables/src/export",
                   {"destination": {"namespace": [ns], "name": "back2"}, "format-version": 2, "compact": True})
    assert st == 200, res
    assert res["metadata"]["format-version"] == 2
    got = catalog.load_table(f"{ns}.back2").scan().to_arrow()
    assert sorted(zip(*(got.column(c).to_pylist() for c in ("id", "v", "score")))) == want
    assert duckdb_rows(catalog_uri, warehouse, f"{ns}.back2") == want
    assert sorted((r.id, r.v, r.score) for r in spark.sql(f"SELECT id, v, score FROM lake.{ns}.back2").collect()) == want
