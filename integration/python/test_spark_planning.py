"""Spark 4.1 with iceberg-spark-runtime 1.12.0 reading through the catalog's
server-side scan planning (Java's RESTTableScan, enabled by the catalog
property scan-planning-mode=server): the rows Spark returns, and proof from
the catalog's /metrics that POST .../plan answered each read."""
import json
import os
import urllib.request
import uuid

import pytest

pyspark = pytest.importorskip("pyspark")
from pyspark.sql import SparkSession  # noqa: E402

PLAN_ROUTE = "/v1/{prefix}/namespaces/{namespace}/tables/{table}/plan"


@pytest.fixture(scope="module")
def spark(catalog_uri, warehouse):
    jars = os.environ["SPARK_JARS"]
    b = (
        SparkSession.builder.master("local[2]")
        .appName("lakehold-planning")
        .config("spark.jars", jars)
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
    )
    # "lake" plans on the client (writes, metadata tables); "planned" is
    # the same catalog with server-side scan planning.
    for name, extra in (("lake", {}), ("planned", {"scan-planning-mode": "server"})):
        b = b.config(f"spark.sql.catalog.{name}", "org.apache.iceberg.spark.SparkCatalog")
        for k, v in {"type": "rest", "uri": catalog_uri, "warehouse": warehouse, **extra}.items():
            b = b.config(f"spark.sql.catalog.{name}.{k}", v)
    session = b.getOrCreate()
    yield session
    session.stop()


@pytest.fixture
def sns(spark):
    name = "pl_" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE NAMESPACE lake.{name}")
    return name


def plans_served(catalog_uri):
    """POST .../plan requests the catalog answered with 200, from /metrics."""
    text = urllib.request.urlopen(catalog_uri + "/metrics").read().decode()
    total = 0
    for line in text.splitlines():
        if line.startswith("catalog_http_requests_total{") and f'route="{PLAN_ROUTE}"' in line \
                and 'method="POST"' in line and 'code="200"' in line:
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def rows(spark, sql):
    return sorted(tuple(r) for r in spark.sql(sql).collect())


def read_planned(spark, catalog_uri, sql):
    """Runs sql and asserts the catalog planned it."""
    before = plans_served(catalog_uri)
    out = rows(spark, sql)
    assert plans_served(catalog_uri) > before, f"the catalog planned no scan for: {sql}"
    return out


def test_config_advertises_planning(catalog_uri, warehouse):
    cfg = json.load(urllib.request.urlopen(f"{catalog_uri}/v1/config?warehouse={warehouse}"))
    assert f"POST {PLAN_ROUTE}" in cfg["endpoints"]


def test_v2_position_deletes_through_plan(spark, catalog_uri, sns):
    t = f"{sns}.mor"
    spark.sql(f"""CREATE TABLE lake.{t} (id BIGINT, cat STRING) USING iceberg PARTITIONED BY (cat)
        TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')""")
    spark.sql(f"INSERT INTO lake.{t} VALUES (1, 'a'), (2, 'a'), (3, 'b'), (4, 'b'), (5, 'c')")
    first = spark.sql(f"SELECT snapshot_id FROM lake.{t}.snapshots ORDER BY committed_at").collect()[0][0]
    spark.sql(f"DELETE FROM lake.{t} WHERE id IN (2, 4)")
    assert spark.sql(f"SELECT count(*) FROM lake.{t}.delete_files").collect()[0][0] > 0, "the delete wrote delete files"

    assert read_planned(spark, catalog_uri, f"SELECT id, cat FROM planned.{t}") == [(1, "a"), (3, "b"), (5, "c")]
    # Filtered reads: by partition and by column metrics.
    assert read_planned(spark, catalog_uri, f"SELECT id FROM planned.{t} WHERE cat = 'b'") == [(3,)]
    assert read_planned(spark, catalog_uri, f"SELECT id FROM planned.{t} WHERE id >= 3") == [(3,), (5,)]
    # Time travel to before the delete.
    assert read_planned(spark, catalog_uri, f"SELECT id FROM planned.{t} VERSION AS OF {first}") == [(i,) for i in range(1, 6)]


def test_v2_update_through_plan(spark, catalog_uri, sns):
    t = f"{sns}.upd"
    spark.sql(f"""CREATE TABLE lake.{t} (id BIGINT, v STRING) USING iceberg
        TBLPROPERTIES ('format-version'='2', 'write.update.mode'='merge-on-read')""")
    spark.sql(f"INSERT INTO lake.{t} VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"UPDATE lake.{t} SET v = 'B' WHERE id = 2")
    assert read_planned(spark, catalog_uri, f"SELECT id, v FROM planned.{t}") == [(1, "a"), (2, "B")]


def test_v3_deletion_vector_through_plan(spark, catalog_uri, sns):
    t = f"{sns}.dv"
    spark.sql(f"""CREATE TABLE lake.{t} (id BIGINT, cat STRING) USING iceberg PARTITIONED BY (cat)
        TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')""")
    spark.sql(f"INSERT INTO lake.{t} VALUES (1, 'a'), (2, 'a'), (3, 'b')")
    spark.sql(f"DELETE FROM lake.{t} WHERE id = 1")
    fmt = spark.sql(f"SELECT file_format FROM lake.{t}.delete_files").collect()
    assert [r[0] for r in fmt] == ["PUFFIN"], "a v3 delete writes a deletion vector"
    assert read_planned(spark, catalog_uri, f"SELECT id, cat FROM planned.{t}") == [(2, "a"), (3, "b")]
    assert read_planned(spark, catalog_uri, f"SELECT id FROM planned.{t} WHERE cat = 'a'") == [(2,)]
