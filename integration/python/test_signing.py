"""Remote signing: PyIceberg and Spark read, write and delete a table on S3
(SeaweedFS) with no storage keys at all. The warehouse's storage profile
signs and cannot vend (no role to assume), so the catalog answers loads with
signing properties and signs each S3 request the engines send it, inside
the table only.

Spark runs Iceberg 1.12.0 (the spec's sign route, found by the client) and,
in a second process, 1.11.0 (which reads s3.signer.endpoint), each with its
AWS bundle; SIGNING_SPARK_JARS names the jars."""
import json
import os
import time
import urllib.error
import uuid

import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from pyiceberg.catalog import load_catalog

from restcall import request
from s3warehouse import admin_fs, create_warehouse

# PyIceberg 0.12 shares one s3fs client between its worker threads and
# re-registers its signer on it from each of them, so a request can go out
# in the gap unsigned and fail with 403 (apache/iceberg-python#3896): run
# its writes on one thread, as docs/credentials.md tells users to. Set
# before PyIceberg creates its executor.
os.environ["PYICEBERG_MAX_WORKERS"] = "1"

URI = os.environ["CATALOG_URI"]
EP = os.environ["SEAWEED_S3_ENDPOINT"]


def call(method, path, body=None):
    return request(method, URI + path, body, raise_errors=True)[2]


@pytest.fixture(scope="module")
def signing_warehouse():
    wh = "sign_" + uuid.uuid4().hex[:6]
    create_warehouse(URI, wh, signing=True)
    return wh


def objects(prefix):
    sel = pafs.FileSelector(prefix.removeprefix("s3://"), recursive=True, allow_not_found=True)
    return [i.path for i in admin_fs().get_file_info(sel) if i.type == pafs.FileType.File]


def test_pyiceberg_through_the_signer(signing_warehouse):
    cat = load_catalog("signed", **{"type": "rest", "uri": URI, "warehouse": signing_warehouse})  # no s3.* keys
    cat.create_namespace("ns")
    t = cat.create_table("ns.events", pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())]))
    props = t.io.properties
    assert props.get("s3.remote-signing-enabled") == "true"
    assert not any(k in props for k in ("s3.access-key-id", "s3.secret-access-key", "s3.session-token"))
    t.append(pa.Table.from_pylist([{"id": i, "name": f"n{i}"} for i in range(1, 6)]))
    t = cat.load_table("ns.events")
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3, 4, 5]
    t.delete("id = 2")
    t.append(pa.Table.from_pylist([{"id": 6, "name": "n6"}]))
    t = cat.load_table("ns.events")
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [1, 3, 4, 5, 6]
    data = [p for p in objects(t.location()) if "/data/" in p]
    assert data, "the data files were written to S3 through the signer"
    # The signer refuses what lies outside the table, even for this caller.
    sign = f"/v1/{signing_warehouse}/namespaces/ns/tables/events/sign"
    outside = f"{EP}/warehouse/{signing_warehouse}/ns/other/data/x.parquet"
    with pytest.raises(urllib.error.HTTPError) as e:
        call("POST", sign, {"region": "us-east-1", "uri": outside, "method": "PUT", "headers": {}})
    assert e.value.code == 403
    assert json.loads(e.value.read())["error"]["type"] == "ForbiddenException"


@pytest.fixture(scope="module")
def spark(signing_warehouse):
    jars = os.environ.get("SIGNING_SPARK_JARS")
    if not jars:
        pytest.skip("SIGNING_SPARK_JARS is not set (integration/run.sh sets it)")
    from pyspark.sql import SparkSession
    session = (
        SparkSession.builder.master("local[2]")
        .appName("lakehold-interop-signing")
        .config("spark.jars", jars)
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.lake", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.lake.type", "rest")
        .config("spark.sql.catalog.lake.uri", URI)
        .config("spark.sql.catalog.lake.warehouse", signing_warehouse)
        .config("spark.sql.catalog.lake.io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
        # Java sends no delegation header unless told to.
        .config("spark.sql.catalog.lake.header.X-Iceberg-Access-Delegation", "remote-signing")
        # A purge by Spark itself would sign deletes for a table it has
        # already dropped, which the catalog no longer knows: let the
        # catalog purge instead.
        .config("spark.sql.catalog.lake.rest-catalog-purge", "true")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )
    yield session
    session.stop()


def test_spark_through_the_signer(spark, signing_warehouse):
    ns = "sp_" + uuid.uuid4().hex[:6]
    spark.sql(f"CREATE NAMESPACE lake.{ns}")
    spark.sql(f"CREATE TABLE lake.{ns}.t (id BIGINT, name STRING) USING iceberg PARTITIONED BY (bucket(2, id))")
    spark.sql(f"INSERT INTO lake.{ns}.t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    spark.sql(f"DELETE FROM lake.{ns}.t WHERE id = 2")
    spark.sql(f"UPDATE lake.{ns}.t SET name = 'C' WHERE id = 3")
    rows = spark.sql(f"SELECT id, name FROM lake.{ns}.t ORDER BY id").collect()
    assert [(r.id, r.name) for r in rows] == [(1, "a"), (3, "C"), (4, "d")]
    loc = spark.sql(f"SELECT file_path FROM lake.{ns}.t.files").collect()
    assert loc and all(r.file_path.startswith(f"s3://warehouse/{signing_warehouse}/{ns}/t") for r in loc)
    # Spark's own FileIO deletes what a failed or replaced write leaves
    # (DeleteObjects, signed with its body): rewrite the files and expire.
    spark.sql(f"CALL lake.system.rewrite_data_files(table => '{ns}.t', options => map('rewrite-all', 'true'))")
    spark.sql(f"CALL lake.system.expire_snapshots(table => '{ns}.t', older_than => TIMESTAMP '2999-01-01', retain_last => 1)")
    live = {r.file_path for r in spark.sql(f"SELECT file_path FROM lake.{ns}.t.files").collect()}
    table_loc = loc[0].file_path.split("/data/")[0]
    # Orphan clean-up lists the table's prefix through the signer (FileIO
    # prefix listing; Hadoop's s3 file system is not on the class path).
    orphans = spark.sql(f"CALL lake.system.remove_orphan_files(table => '{ns}.t', "
                        "older_than => TIMESTAMP '2000-01-01', dry_run => true, prefix_listing => true)").collect()
    assert orphans == []
    on_s3 = {"s3://" + p for p in objects(table_loc) if "/data/" in p}
    assert on_s3 == live, "expiry deleted the replaced data files through the signer"
    assert [(r.id, r.name) for r in spark.sql(f"SELECT id, name FROM lake.{ns}.t ORDER BY id").collect()] == \
        [(1, "a"), (3, "C"), (4, "d")]
    if "-1.11." in os.environ["SIGNING_SPARK_JARS"]:
        # Iceberg 1.11's Spark purges by itself after the drop, when the
        # catalog no longer signs for the table (docs/storage.md): drop only.
        spark.sql(f"DROP TABLE lake.{ns}.t")
        assert objects(table_loc), "a plain drop keeps the files"
        return
    spark.sql(f"DROP TABLE lake.{ns}.t PURGE")
    deadline = time.time() + 60
    while [p for p in objects(table_loc) if "/data/" in p] and time.time() < deadline:
        time.sleep(0.5)
    assert not [p for p in objects(table_loc) if "/data/" in p], "the catalog's purge deleted the data files"
