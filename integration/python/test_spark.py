"""Spark 4.1 with iceberg-spark-runtime 1.12.0 against the catalog: DDL,
DML (copy-on-write and merge-on-read), evolution, time travel, views,
procedures, concurrent writers and the metrics reports it sends."""
import os
import threading
import time
import uuid

import pytest

pyspark = pytest.importorskip("pyspark")
from pyspark.sql import SparkSession  # noqa: E402
from restcall import request  # noqa: E402


@pytest.fixture(scope="module")
def spark(catalog_uri, warehouse):
    jars = os.environ["SPARK_JARS"]
    session = (
        SparkSession.builder.master("local[2]")
        .appName("lakehold-interop")
        .config("spark.jars", jars)
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        # The same catalog settings the README shows.
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


@pytest.fixture
def sns(spark):
    name = "sp_" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE NAMESPACE lake.{name}")
    return name


def ids(spark, table):
    return sorted(r[0] for r in spark.sql(f"SELECT id FROM {table}").collect())


def test_create_ctas_insert(spark, sns):
    t = f"lake.{sns}.t"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, name STRING) USING iceberg PARTITIONED BY (bucket(4, id))")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql(f"CREATE TABLE lake.{sns}.copy USING iceberg AS SELECT * FROM {t} WHERE id > 1")
    assert ids(spark, f"lake.{sns}.copy") == [2, 3]


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_update_delete_merge(spark, sns, mode):
    t = f"lake.{sns}.dml"
    spark.sql(f"""CREATE TABLE {t} (id BIGINT, v STRING) USING iceberg TBLPROPERTIES (
        'format-version'='2', 'write.update.mode'='{mode}', 'write.delete.mode'='{mode}', 'write.merge.mode'='{mode}')""")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql(f"UPDATE {t} SET v = 'B' WHERE id = 2")
    spark.sql(f"DELETE FROM {t} WHERE id = 1")
    spark.sql(f"""MERGE INTO {t} t USING (SELECT 3 AS id, 'C' AS v UNION ALL SELECT 4, 'd') s ON t.id = s.id
        WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *""")
    rows = sorted((r.id, r.v) for r in spark.sql(f"SELECT * FROM {t}").collect())
    assert rows == [(2, "B"), (3, "C"), (4, "d")]


def test_schema_partition_evolution_and_time_travel(spark, sns):
    t = f"lake.{sns}.evo"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, ts TIMESTAMP) USING iceberg")
    spark.sql(f"INSERT INTO {t} VALUES (1, timestamp '2026-01-01 00:00:00')")
    first = spark.sql(f"SELECT snapshot_id FROM {t}.snapshots ORDER BY committed_at").collect()[0][0]
    spark.sql(f"ALTER TABLE {t} ADD COLUMN note STRING")
    spark.sql(f"ALTER TABLE {t} ADD PARTITION FIELD days(ts)")
    spark.sql(f"INSERT INTO {t} VALUES (2, timestamp '2026-01-02 00:00:00', 'x')")
    assert ids(spark, t) == [1, 2]
    assert [r[0] for r in spark.sql(f"SELECT id FROM {t} VERSION AS OF {first}").collect()] == [1]
    assert "note" in spark.table(t).columns


def test_views(spark, sns):
    spark.sql(f"CREATE TABLE lake.{sns}.base (id BIGINT) USING iceberg")
    spark.sql(f"INSERT INTO lake.{sns}.base VALUES (1), (2)")
    spark.sql(f"CREATE VIEW lake.{sns}.v AS SELECT id * 10 AS id FROM lake.{sns}.base")
    assert ids(spark, f"lake.{sns}.v") == [10, 20]
    spark.sql(f"CREATE OR REPLACE VIEW lake.{sns}.v AS SELECT id FROM lake.{sns}.base WHERE id > 1")
    assert ids(spark, f"lake.{sns}.v") == [2]
    spark.sql(f"DROP VIEW lake.{sns}.v")


def test_procedures(spark, sns):
    t = f"lake.{sns}.proc"
    spark.sql(f"CREATE TABLE {t} (id BIGINT) USING iceberg")
    for i in range(3):
        spark.sql(f"INSERT INTO {t} VALUES ({i})")
    spark.sql(f"CALL lake.system.rewrite_data_files(table => '{sns}.proc', options => map('min-input-files', '2'))")
    spark.sql(f"CALL lake.system.expire_snapshots(table => '{sns}.proc', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)")
    assert spark.sql(f"SELECT count(*) FROM {t}.snapshots").collect()[0][0] == 1
    assert ids(spark, t) == [0, 1, 2]


def test_concurrent_sessions(spark, sns):
    t = f"lake.{sns}.conc"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, w INT) USING iceberg")
    sessions = [spark.newSession(), spark.newSession()]
    errors = []

    def writer(n, s):
        try:
            for i in range(5):
                s.sql(f"INSERT INTO {t} VALUES ({n * 100 + i}, {n})")
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(n, s)) for n, s in enumerate(sessions)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    spark.sql(f"REFRESH TABLE {t}")  # the session caches table state
    assert spark.sql(f"SELECT count(*) FROM {t}").collect()[0][0] == 10


def test_register_table_rule(spark, sns):
    """docs/design.md "One location, one live name": register_table over a
    live table's files is refused with a precise 409 AlreadyExists (not
    Java's "Malformed request"); after a DROP without purge, the same
    metadata registers under the new name and reads the same rows."""
    t = f"lake.{sns}.orig"
    spark.sql(f"CREATE TABLE {t} (id BIGINT) USING iceberg")
    spark.sql(f"INSERT INTO {t} VALUES (1), (2)")
    meta = spark.sql(f"SELECT file FROM {t}.metadata_log_entries ORDER BY timestamp DESC LIMIT 1").collect()[0][0]
    with pytest.raises(Exception) as e:
        spark.sql(f"CALL lake.system.register_table(table => '{sns}.second', metadata_file => '{meta}')")
    msg = str(e.value)
    assert "AlreadyExistsException" in msg, msg
    assert f"Cannot register {sns}.second: its location is already used by another table or view" in msg, msg
    assert "Malformed request" not in msg, msg
    spark.sql(f"DROP TABLE {t}")  # no PURGE: the files stay
    spark.sql(f"CALL lake.system.register_table(table => '{sns}.second', metadata_file => '{meta}')")
    assert ids(spark, f"lake.{sns}.second") == [1, 2]


def test_engine_reports_stored(spark, sns, catalog_uri, warehouse):
    """Iceberg's REST client in Spark posts a commit report after the insert
    and a scan report after the read; both are stored and come back from
    the management route (the catalog runs with the default
    --reports-retention), ids exact and newest first."""
    t = f"lake.{sns}.reported"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, v STRING) USING iceberg")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b')")
    snap = spark.sql(f"SELECT snapshot_id FROM {t}.snapshots").collect()[0][0]
    assert ids(spark, t) == [1, 2]
    url = f"{catalog_uri}/management/v1/warehouses/{warehouse}/namespaces/{sns}/tables/reported/reports"
    deadline = time.time() + 15
    while True:
        status, _, body = request("GET", url)
        assert status == 200, body
        types = {r["report-type"] for r in body["reports"]}
        if {"commit-report", "scan-report"} <= types or time.time() > deadline:
            break
        time.sleep(0.2)
    assert {"commit-report", "scan-report"} <= types, body
    received = [r["received-at-ms"] for r in body["reports"]]
    assert received == sorted(received, reverse=True)
    commit = next(r for r in body["reports"] if r["report-type"] == "commit-report")
    assert commit["snapshot-id"] == snap
    assert commit["report"]["operation"] == "append"
    assert commit["report"]["metrics"]["added-records"] == {"unit": "count", "value": 2}
    scan = next(r for r in body["reports"] if r["report-type"] == "scan-report")
    assert scan["snapshot-id"] == snap
    assert "id" in scan["report"]["projected-field-names"]
    assert scan["report"]["metrics"]["result-data-files"]["value"] >= 1
