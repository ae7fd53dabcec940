"""Upgrading tables that Spark and PyIceberg wrote to format version 4.

Spark 4.1 (iceberg-spark-runtime 1.12.0) writes a partitioned v3 table and
deletes rows merge-on-read (deletion vectors); PyIceberg (which writes up
to format 2) writes a partitioned table, then taken to v3 (its files have
no first_row_id, and keep none). Each is upgraded with `upgrade-format-version: 4`
over plain HTTP, then planned through the catalog (v4 planner) and read
row by row with pyarrow (deletion vectors decoded with pyroaring): the rows
equal what the writer read before the upgrade, and every file equals the
one the pre-upgrade snapshot plans (Avro planner, time travel). A v2 table
with position delete files is refused with a 400 naming them, and accepted
once Spark's rewrite_position_delete_files has turned them into DVs.
"""
import os
import struct
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyroaring import BitMap

from restcall import V4, request

URI = os.environ["CATALOG_URI"]
WH = os.environ["CATALOG_WAREHOUSE"]


def call(method, path, body=None, headers=None):
    status, _, data = request(method, f"{URI}/v1/{WH}{path}", body, {**V4, **(headers or {})})
    return status, data


def upgrade(ns, table):
    return call("POST", f"/namespaces/{ns}/tables/{table}",
                {"requirements": [], "updates": [{"action": "upgrade-format-version", "format-version": 4}]})


def plan(ns, table, **req):
    st, res = call("POST", f"/namespaces/{ns}/tables/{table}/plan", req, {"X-Iceberg-Column-Files": "true"})
    assert st == 200, res
    assert res["status"] == "completed" and not res.get("plan-tasks"), res
    return res


def local(loc):
    return loc.removeprefix("file://") if loc.startswith("file://") else loc.removeprefix("file:")


def dv_positions(d):
    """Decodes a deletion-vector-v1 blob: length, magic, 64-bit roaring
    (portable: bucket count, then per bucket a 32-bit key and a 32-bit
    roaring bitmap), CRC."""
    with open(local(d["file-path"]), "rb") as f:
        f.seek(d["content-offset"])
        blob = f.read(d["content-size-in-bytes"])
    assert blob[4:8] == b"\xd1\xd3\x39\x64"
    body = blob[8:-4]
    n = struct.unpack_from("<q", body, 0)[0]
    off, out = 8, set()
    for _ in range(n):
        key = struct.unpack_from("<I", body, off)[0]
        off += 4
        bm = BitMap.deserialize(body[off:])
        off += len(bm.serialize())
        out.update((key << 32) | p for p in bm)
    assert len(out) == d["record-count"]
    return out


def rows_of(res, cols):
    """Reads every planned task with pyarrow, dropping DV-deleted rows."""
    out = []
    for task in res["file-scan-tasks"]:
        df = task["data-file"]
        deleted = set()
        for ref in task.get("delete-file-references", []):
            d = res["delete-files"][ref]
            assert d["content"] == "position-deletes" and d.get("content-offset") is not None, d
            deleted |= dv_positions(d)
        t = pq.read_table(local(df["file-path"]))
        assert t.num_rows == df["record-count"]
        values = t.select(cols).to_pylist()
        out.extend(tuple(r[c] for c in cols) for i, r in enumerate(values) if i not in deleted)
    return sorted(out)


def same_files(before, after):
    def files(res):
        out = {}
        for task in res["file-scan-tasks"]:
            df = task["data-file"]
            dvs = [{k: res["delete-files"][i].get(k) for k in ("file-path", "content-offset", "content-size-in-bytes", "record-count")}
                   for i in task.get("delete-file-references", [])]
            out[df["file-path"]] = ({k: df.get(k) for k in ("file-format", "spec-id", "partition", "record-count",
                                                             "file-size-in-bytes", "first-row-id")}, dvs)
        return out
    b, a = files(before), files(after)
    assert b.keys() == a.keys()
    for k in b:
        # A file written before row lineage has no first-row-id until the
        # conversion assigns it one; every other file keeps its own.
        fb, fa = b[k][0]["first-row-id"], a[k][0]["first-row-id"]
        assert fa == fb if fb is not None else isinstance(fa, int), k
        rest = lambda d: {**d, "file-format": d["file-format"].lower(), "first-row-id": None}
        assert rest(b[k][0]) == rest(a[k][0]), k
        assert b[k][1] == a[k][1], k


def check_upgraded(ns, table, want, cols):
    st, res = call("GET", f"/namespaces/{ns}/tables/{table}")
    assert st == 200, res
    old = res["metadata"]["current-snapshot-id"]
    st, res = upgrade(ns, table)
    assert st == 200, res
    md = res["metadata"]
    assert md["format-version"] == 4
    conv = [s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"]][0]
    assert conv["summary"]["operation"] == "replace"
    assert conv["summary"]["v4-conversion-of-snapshot-id"] == str(old)
    after = plan(ns, table)
    before = plan(ns, table, **{"snapshot-id": old})
    assert rows_of(after, cols) == want
    assert rows_of(before, cols) == want
    same_files(before, after)


pyspark = pytest.importorskip("pyspark")
from pyspark.sql import SparkSession  # noqa: E402


@pytest.fixture(scope="module")
def spark(catalog_uri, warehouse):
    session = (
        SparkSession.builder.master("local[2]")
        .appName("lakehold-v4-upgrade")
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
    yield session
    session.stop()


def spark_ns(spark):
    name = "up_" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE NAMESPACE lake.{name}")
    return name


def test_spark_v3_with_dvs(spark):
    ns = spark_ns(spark)
    t = f"lake.{ns}.events"
    spark.sql(f"""CREATE TABLE {t} (id BIGINT, v STRING) USING iceberg PARTITIONED BY (bucket(4, id)) TBLPROPERTIES (
        'format-version'='3', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')""")
    spark.sql(f"INSERT INTO {t} SELECT id, concat('v', id) FROM range(0, 40)")
    spark.sql(f"INSERT INTO {t} SELECT id, concat('w', id) FROM range(40, 60)")
    spark.sql(f"DELETE FROM {t} WHERE id % 7 = 0")
    dvs = spark.sql(f"SELECT count(*) FROM {t}.delete_files WHERE file_format = 'PUFFIN'").collect()[0][0]
    assert dvs > 0, "Spark wrote deletion vectors"
    want = sorted((r.id, r.v) for r in spark.sql(f"SELECT id, v FROM {t}").collect())
    assert len(want) == 60 - 9
    check_upgraded(ns, "events", want, ["id", "v"])


def test_spark_position_deletes_refused_then_rewritten(spark):
    ns = spark_ns(spark)
    t = f"lake.{ns}.pd"
    spark.sql(f"""CREATE TABLE {t} (id BIGINT, v STRING) USING iceberg PARTITIONED BY (bucket(2, id)) TBLPROPERTIES (
        'format-version'='2', 'write.delete.mode'='merge-on-read')""")
    spark.sql(f"INSERT INTO {t} SELECT id, concat('v', id) FROM range(0, 20)")
    spark.sql(f"DELETE FROM {t} WHERE id % 3 = 0")
    spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('format-version'='3')")
    st, res = upgrade(ns, "pd")
    assert st == 400, res
    err = res["error"]
    assert err["type"] == "ValidationException" and err.get("reason") == "not-convertible-to-v4", err
    assert "position delete files" in err["message"] and "rewrite_position_delete_files" in err["message"], err
    assert "file:" not in err["message"] and WH not in err["message"], err
    try:
        spark.sql(f"CALL lake.system.rewrite_position_delete_files(table => '{ns}.pd', options => map('rewrite-all', 'true'))")
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"rewrite_position_delete_files did not run here: {str(e)[:200]}")
    left = spark.sql(f"SELECT count(*) FROM {t}.delete_files WHERE file_format <> 'PUFFIN'").collect()[0][0]
    if left:
        pytest.skip(f"rewrite_position_delete_files left {left} position delete files (no DV conversion in this Iceberg)")
    want = sorted((r.id, r.v) for r in spark.sql(f"SELECT id, v FROM {t}").collect())
    check_upgraded(ns, "pd", want, ["id", "v"])


def test_pyiceberg_v3_partitioned(catalog):
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType

    ns = "upy_" + uuid.uuid4().hex[:8]
    catalog.create_namespace(ns)
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "cat", StringType(), required=False))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="cat"))
    # PyIceberg 0.12 writes up to format 2; the catalog takes it to 3.
    tbl = catalog.create_table(f"{ns}.t", schema=schema, partition_spec=spec, properties={"format-version": "2"})
    arrow_schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("cat", pa.string())])
    tbl.append(pa.table({"id": list(range(10)), "cat": ["a", "b"] * 5}, schema=arrow_schema))
    tbl.append(pa.table({"id": list(range(10, 16)), "cat": ["c", "a", "b"] * 2}, schema=arrow_schema))
    tbl.delete("id = 3")
    st, res = call("POST", f"/namespaces/{ns}/tables/t",
                   {"requirements": [], "updates": [{"action": "upgrade-format-version", "format-version": 3}]})
    assert st == 200, res
    tbl = catalog.load_table(f"{ns}.t")
    want = sorted((r["id"], r["cat"]) for r in tbl.scan().to_arrow().to_pylist())
    assert len(want) == 15
    check_upgraded(ns, "t", want, ["id", "cat"])
