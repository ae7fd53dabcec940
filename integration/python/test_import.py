"""`catalog import` read back by PyIceberg and Spark: a second catalog (the
source, started here with CATALOG_BIN) holds tables written by PyIceberg
(two snapshots, a deletion, a schema change) and by Spark (merge-on-read
deletes, a view); after the import into the catalog under test (the
target), each engine reads the same rows from both."""
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from restcall import request

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "city", StringType(), required=False),
)
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("city", pa.string())])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def source():
    """A second catalog on SQLite, warehouse "old" under a temporary
    directory; yields (uri, warehouse directory)."""
    binary = os.environ.get("CATALOG_BIN")
    if not binary:
        pytest.skip("CATALOG_BIN is not set (integration/run.sh sets it)")
    home = tempfile.mkdtemp(prefix="import-source-")
    wh = os.path.join(home, "wh")
    os.makedirs(wh)
    port = free_port()
    proc = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", os.path.join(home, "data"),
                             "--warehouse", f"old=file://{wh}", "--default-warehouse", "old", "--log-level", "warn"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    uri = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(uri + "/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        yield uri, wh
    finally:
        proc.kill()
        proc.wait()


def rows_of(tbl, snapshot_id=None):
    return sorted(tbl.scan(snapshot_id=snapshot_id).to_arrow().to_pylist(), key=lambda r: r["id"])


def test_import_reads_back_equal(source, catalog_uri):
    src_uri, src_dir = source
    # The target warehouse lists the source's directory as an allowed
    # location, so the source's metadata files may be registered in it.
    name = new_target_warehouse(catalog_uri, src_dir)

    src = load_catalog("src", **{"type": "rest", "uri": src_uri, "warehouse": "old"})
    src.create_namespace("shop", {"owner": "sales"})
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="city"))
    t = src.create_table("shop.orders", SCHEMA, partition_spec=spec)
    t.append(pa.Table.from_pylist([{"id": i, "city": c} for i, c in [(1, "Oslo"), (2, "Lima"), (3, "Oslo")]], schema=ARROW))
    first = t.current_snapshot().snapshot_id
    t.append(pa.Table.from_pylist([{"id": 4, "city": "Pune"}], schema=ARROW))
    t.delete("id = 2")
    with t.update_schema() as u:
        u.add_column("note", StringType())
    t = src.load_table("shop.orders")

    out = subprocess.run([os.environ["CATALOG_BIN"], "import", "--json", "--source-uri", src_uri, "--source-warehouse", "old",
                          "--uri", catalog_uri, "--warehouse", name], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert {(i["kind"], i["status"]) for i in report["items"]} == {("namespace", "imported"), ("table", "imported")}

    dst = load_catalog("dst", **{"type": "rest", "uri": catalog_uri, "warehouse": name})
    assert dst.load_namespace_properties("shop")["owner"] == "sales"
    got = dst.load_table("shop.orders")
    assert got.metadata.table_uuid == t.metadata.table_uuid
    assert got.current_snapshot().snapshot_id == t.current_snapshot().snapshot_id
    assert got.schema() == t.schema()
    assert [s.snapshot_id for s in got.snapshots()] == [s.snapshot_id for s in t.snapshots()]
    want = rows_of(t)
    assert [r["id"] for r in want] == [1, 3, 4]
    assert rows_of(got) == want
    assert rows_of(got, first) == rows_of(t, first)

    # A rerun changes nothing and says so.
    again = subprocess.run([os.environ["CATALOG_BIN"], "import", "--json", "--quiet", "--source-uri", src_uri,
                            "--source-warehouse", "old", "--uri", catalog_uri, "--warehouse", name],
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert {i["status"] for i in json.loads(again.stdout)["items"]} == {"skipped"}
    assert dst.load_table("shop.orders").metadata_location == got.metadata_location


def new_target_warehouse(catalog_uri, src_dir):
    """A warehouse of the catalog under test whose allowed-locations cover
    the source's directory; returns its name."""
    name = "imp_" + uuid.uuid4().hex[:8]
    status, _, body = request("POST", catalog_uri + "/management/v1/warehouses", {
        "name": name, "location": "file://" + tempfile.mkdtemp(prefix="import-target-"),
        "properties": {"allowed-locations": "file://" + src_dir}})
    assert status in (200, 201), body
    return name


def test_import_spark_reads_back_equal(source, catalog_uri):
    """Spark writes a merge-on-read table (position deletes) and a view in
    the source; after the import Spark reads the same rows through the
    target, from the table and from the view."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession
    jars = os.environ.get("SPARK_JARS")
    if not jars:
        pytest.skip("SPARK_JARS is not set (integration/run.sh sets it)")
    src_uri, src_dir = source
    name = new_target_warehouse(catalog_uri, src_dir)
    b = SparkSession.builder.master("local[2]").appName("lakehold-import")
    b = b.config("spark.jars", jars).config("spark.sql.extensions",
                                            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
    for cat, uri, wh in (("src", src_uri, "old"), ("dst", catalog_uri, name)):
        b = (b.config(f"spark.sql.catalog.{cat}", "org.apache.iceberg.spark.SparkCatalog")
             .config(f"spark.sql.catalog.{cat}.type", "rest").config(f"spark.sql.catalog.{cat}.uri", uri)
             .config(f"spark.sql.catalog.{cat}.warehouse", wh))
    spark = (b.config("spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1").getOrCreate())
    try:
        spark.sql("CREATE NAMESPACE src.sp")
        spark.sql("""CREATE TABLE src.sp.t (id BIGINT, v STRING) USING iceberg PARTITIONED BY (bucket(2, id))
                     TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')""")
        spark.sql("INSERT INTO src.sp.t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
        spark.sql("DELETE FROM src.sp.t WHERE id = 2")
        spark.sql("CREATE VIEW src.sp.big AS SELECT id, v FROM src.sp.t WHERE id > 2")

        out = subprocess.run([os.environ["CATALOG_BIN"], "import", "--json", "--source-uri", src_uri,
                              "--source-warehouse", "old", "--uri", catalog_uri, "--warehouse", name],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr
        statuses = {(i["kind"], ".".join(i["namespace"] + [i.get("name", "")]).rstrip(".")): i["status"]
                    for i in json.loads(out.stdout)["items"]}
        assert statuses == {("namespace", "sp"): "imported", ("table", "sp.t"): "imported", ("view", "sp.big"): "imported"}

        def rows(sql):
            return sorted(tuple(r) for r in spark.sql(sql).collect())
        assert rows("SELECT * FROM dst.sp.t") == rows("SELECT * FROM src.sp.t") == [(1, "a"), (3, "c"), (4, "d")]
        assert rows("SELECT * FROM dst.sp.t.snapshots")[-1] == rows("SELECT * FROM src.sp.t.snapshots")[-1]
        # The view's SQL names src.sp.t as written in the source: it reads
        # the same rows through either catalog.
        assert rows("SELECT * FROM dst.sp.big") == rows("SELECT * FROM src.sp.big") == [(3, "c"), (4, "d")]
    finally:
        spark.stop()
