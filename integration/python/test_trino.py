"""Trino 483 (assembled from Maven Central by integration/trino/assemble.sh)
against the catalog, over Trino's HTTP protocol with the `trino` client:
schemas, CTAS with partition transforms, DML, column evolution, views,
metadata tables, time travel, optimize, tables written by PyIceberg and
Spark, DROP. run.sh starts Trino with the README's catalog configuration
and passes TRINO_URI."""
import os
import uuid

import pyarrow as pa
import pytest

trino = pytest.importorskip("trino")
if not os.environ.get("TRINO_URI"):
    pytest.skip("TRINO_URI is not set (integration/run.sh starts Trino 483)", allow_module_level=True)


@pytest.fixture(scope="module")
def run():
    host, port = os.environ["TRINO_URI"].removeprefix("http://").split(":")
    conn = trino.dbapi.connect(host=host, port=int(port), user="interop", catalog="lake")

    def q(sql):
        cur = conn.cursor()
        cur.execute(sql)
        return cur.fetchall()

    yield q
    conn.close()


@pytest.fixture
def schema(run):
    name = "tr_" + uuid.uuid4().hex[:8]
    run(f"CREATE SCHEMA lake.{name}")
    return name


def test_schemas(run, schema, catalog):
    assert [schema] in run("SHOW SCHEMAS FROM lake")
    assert (schema,) in catalog.list_namespaces()
    run(f"CREATE SCHEMA lake.{schema}_2")
    run(f"DROP SCHEMA lake.{schema}_2")
    assert [f"{schema}_2"] not in run("SHOW SCHEMAS FROM lake")


def test_ctas_with_partition_transforms(run, schema, catalog):
    t = f"lake.{schema}.events"
    run(f"""CREATE TABLE {t} WITH (partitioning = ARRAY['bucket(id, 4)', 'day(ts)', 'truncate(name, 2)']) AS
        SELECT * FROM (VALUES (1, TIMESTAMP '2026-01-01 10:00:00', 'alpha'), (2, TIMESTAMP '2026-01-02 11:00:00', 'beta'))
        AS v(id, ts, name)""")
    assert run(f"SELECT id, name FROM {t} ORDER BY id") == [[1, "alpha"], [2, "beta"]]
    spec = catalog.load_table(f"{schema}.events").spec()
    assert [str(f.transform) for f in spec.fields] == ["bucket[4]", "day", "truncate[2]"]


def test_insert_update_delete_merge(run, schema):
    t = f"lake.{schema}.dml"
    run(f"CREATE TABLE {t} (id BIGINT, v VARCHAR)")
    run(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    run(f"UPDATE {t} SET v = 'B' WHERE id = 2")
    run(f"DELETE FROM {t} WHERE id = 1")
    run(f"""MERGE INTO {t} t USING (VALUES (3, 'C'), (4, 'd')) AS s(id, v) ON t.id = s.id
        WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)""")
    assert run(f"SELECT id, v FROM {t} ORDER BY id") == [[2, "B"], [3, "C"], [4, "d"]]


def test_column_evolution(run, schema, catalog):
    t = f"lake.{schema}.evo"
    run(f"CREATE TABLE {t} (id BIGINT, old VARCHAR)")
    run(f"INSERT INTO {t} VALUES (1, 'x')")
    run(f"ALTER TABLE {t} ADD COLUMN note VARCHAR")
    run(f"ALTER TABLE {t} RENAME COLUMN old TO renamed")
    run(f"ALTER TABLE {t} DROP COLUMN note")
    run(f"ALTER TABLE {t} ADD COLUMN score DOUBLE")
    run(f"INSERT INTO {t} VALUES (2, 'y', 0.5)")
    assert run(f"SELECT id, renamed, score FROM {t} ORDER BY id") == [[1, "x", None], [2, "y", 0.5]]
    names = [f.name for f in catalog.load_table(f"{schema}.evo").schema().fields]
    assert names == ["id", "renamed", "score"]


def test_views(run, schema):
    run(f"CREATE TABLE lake.{schema}.base (id BIGINT)")
    run(f"INSERT INTO lake.{schema}.base VALUES (1), (2)")
    run(f"CREATE VIEW lake.{schema}.v AS SELECT id * 10 AS id FROM lake.{schema}.base")
    assert run(f"SELECT id FROM lake.{schema}.v ORDER BY id") == [[10], [20]]
    run(f"CREATE OR REPLACE VIEW lake.{schema}.v AS SELECT id FROM lake.{schema}.base WHERE id > 1")
    assert run(f"SELECT id FROM lake.{schema}.v") == [[2]]
    run(f"DROP VIEW lake.{schema}.v")
    assert ["v"] not in run(f"SHOW TABLES FROM lake.{schema}")


def test_metadata_tables_and_time_travel(run, schema):
    t = f"lake.{schema}.tt"
    run(f"CREATE TABLE {t} (id BIGINT)")
    run(f"INSERT INTO {t} VALUES (1)")
    snaps = run(f'SELECT snapshot_id FROM lake.{schema}."tt$snapshots" ORDER BY committed_at')
    first = snaps[-1][0]
    run(f"INSERT INTO {t} VALUES (2)")
    # Trino's CREATE TABLE commits an empty snapshot of its own.
    assert len(run(f'SELECT * FROM lake.{schema}."tt$snapshots"')) == len(snaps) + 1
    assert len(run(f'SELECT file_path FROM lake.{schema}."tt$files"')) == 2
    assert run(f"SELECT id FROM {t} FOR VERSION AS OF {first}") == [[1]]
    assert sorted(run(f"SELECT id FROM {t}")) == [[1], [2]]


def test_optimize(run, schema):
    t = f"lake.{schema}.opt"
    run(f"CREATE TABLE {t} (id BIGINT)")
    for i in range(3):
        run(f"INSERT INTO {t} VALUES ({i})")
    assert len(run(f'SELECT file_path FROM lake.{schema}."opt$files"')) == 3
    run(f"ALTER TABLE {t} EXECUTE optimize")
    assert len(run(f'SELECT file_path FROM lake.{schema}."opt$files"')) == 1
    assert sorted(run(f"SELECT id FROM {t}")) == [[0], [1], [2]]


def test_reads_pyiceberg_table(run, schema, catalog):
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType
    t = catalog.create_table(f"{schema}.from_py", Schema(NestedField(1, "n", LongType(), required=False),
                                                         NestedField(2, "s", StringType(), required=False)))
    t.append(pa.Table.from_pylist([{"n": 5, "s": "a"}, {"n": 7, "s": "b"}]))
    assert run(f"SELECT sum(n), max(s) FROM lake.{schema}.from_py") == [[12, "b"]]


@pytest.fixture(scope="module")
def spark(catalog_uri, warehouse):
    """One Spark session for the module, on the file warehouse (catalog
    lake) and, with vended credentials, on the S3 warehouse (catalog s3)."""
    if not os.environ.get("SPARK_JARS"):
        pytest.skip("SPARK_JARS is not set (integration/run.sh fetches the Iceberg Spark runtime)")
    from pyspark.sql import SparkSession
    jars = os.environ["SPARK_JARS"] + "," + os.environ["SPARK_AWS_JAR"]
    b = (SparkSession.builder.master("local[1]").appName("lakehold-interop-trino")
         .config("spark.jars", jars)
         .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
         .config("spark.ui.enabled", "false")
         .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1"))
    cats = {"lake": {"warehouse": warehouse}}
    if os.environ.get("TRINO_S3_WAREHOUSE"):
        cats["s3"] = {"warehouse": os.environ["TRINO_S3_WAREHOUSE"], "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
                      "header.X-Iceberg-Access-Delegation": "vended-credentials"}
    for name, conf in cats.items():
        b = b.config(f"spark.sql.catalog.{name}", "org.apache.iceberg.spark.SparkCatalog") \
             .config(f"spark.sql.catalog.{name}.type", "rest").config(f"spark.sql.catalog.{name}.uri", catalog_uri)
        for k, v in conf.items():
            b = b.config(f"spark.sql.catalog.{name}.{k}", v)
    session = b.getOrCreate()
    yield session
    session.stop()


def test_reads_spark_table(run, schema, spark):
    spark.sql(f"CREATE TABLE lake.{schema}.from_spark (id BIGINT, d DATE) USING iceberg PARTITIONED BY (months(d))")
    spark.sql(f"INSERT INTO lake.{schema}.from_spark VALUES (1, DATE '2026-01-05'), (2, DATE '2026-02-07')")
    spark.sql(f"DELETE FROM lake.{schema}.from_spark WHERE id = 1")
    assert run(f"SELECT id FROM lake.{schema}.from_spark") == [[2]]


def test_s3_with_vended_credentials(run, spark):
    """Catalog s3lake: Trino on the SeaweedFS warehouse with
    iceberg.rest-catalog.vended-credentials-enabled=true and no keys of its
    own (the README's S3 snippet). CTAS, insert, MERGE, a table Spark wrote
    there with its own vended credentials, and DROP."""
    wh = os.environ.get("TRINO_S3_WAREHOUSE")
    if not wh:
        pytest.skip("TRINO_S3_WAREHOUSE is not set (integration/run.sh creates it on SeaweedFS)")
    ns = "s3_" + uuid.uuid4().hex[:8]
    run(f"CREATE SCHEMA s3lake.{ns}")
    t = f"s3lake.{ns}.scores"
    run(f"""CREATE TABLE {t} WITH (partitioning = ARRAY['bucket(id, 2)']) AS
        SELECT * FROM (VALUES (1, 'a', 5), (2, 'b', 7)) AS v(id, name, score)""")
    run(f"INSERT INTO {t} VALUES (3, 'c', 1)")
    run(f"""MERGE INTO {t} AS t USING (VALUES (1, 9), (4, 4)) AS s(id, score) ON t.id = s.id
        WHEN MATCHED THEN UPDATE SET score = s.score
        WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'new', s.score)""")
    assert run(f"SELECT id, name, score FROM {t} ORDER BY id") == [
        [1, "a", 9], [2, "b", 7], [3, "c", 1], [4, "new", 4]]
    paths = [r[0] for r in run(f'SELECT file_path FROM s3lake.{ns}."scores$files"')]
    assert paths and all(p.startswith(f"s3://warehouse/{wh}/{ns}/scores") for p in paths)

    spark.sql(f"CREATE TABLE s3.{ns}.from_spark (id BIGINT, d DATE) USING iceberg PARTITIONED BY (months(d))")
    spark.sql(f"INSERT INTO s3.{ns}.from_spark VALUES (1, DATE '2026-01-05'), (2, DATE '2026-02-07')")
    assert run(f"SELECT id FROM s3lake.{ns}.from_spark ORDER BY id") == [[1], [2]]

    run(f"DROP TABLE {t}")
    run(f"DROP TABLE s3lake.{ns}.from_spark")
    assert run(f"SHOW TABLES FROM s3lake.{ns}") == []
    run(f"DROP SCHEMA s3lake.{ns}")


def test_drop(run, schema, catalog):
    t = f"lake.{schema}.gone"
    run(f"CREATE TABLE {t} (id BIGINT)")
    run(f"INSERT INTO {t} VALUES (1)")
    run(f"DROP TABLE {t}")
    assert not catalog.table_exists(f"{schema}.gone")
    run(f"DROP SCHEMA lake.{schema}")
    assert (schema,) not in catalog.list_namespaces()

# Trino with OAUTH2 service principals against a catalog with authentication
# on is in test_auth.py (the access client).
