"""Spark 4.1 + Apache DataFusion Comet 1.2.0 + iceberg-spark-runtime 1.11.0
against the catalog: Comet's native Iceberg writer (iceberg-rust) on the
local warehouse and on SeaweedFS through vended credentials, and the
catalog's native-write-eligibility report checked against what Comet
actually does, table variant by table variant.

Comet 1.2.0 needs Iceberg 1.11.x: with 1.12.0 it never writes natively
(its reflection looks for a ManifestFiles.read overload 1.12.0 removed), so
run.sh passes COMET_JARS (the Comet jar, the 1.11.0 runtime and the 1.11.0
AWS bundle) rather than the Spark client's jars."""
import json
import os
import urllib.request
import uuid

import pyarrow.parquet as pq
import pytest

pyspark = pytest.importorskip("pyspark")
from pyspark.sql import SparkSession  # noqa: E402

if not os.environ.get("COMET_JARS"):
    pytest.skip("COMET_JARS is not set (integration/run.sh fetches Comet 1.2.0)", allow_module_level=True)


@pytest.fixture(scope="module")
def spark(catalog_uri, warehouse):
    jars = os.environ["COMET_JARS"]
    session = (
        SparkSession.builder.master("local[2]")
        .appName("lakehold-interop-comet")
        .config("spark.jars", jars)
        # Comet's plugin is loaded before spark.jars reach the class loader.
        .config("spark.driver.extraClassPath", jars.replace(",", ":"))
        .config("spark.executor.extraClassPath", jars.replace(",", ":"))
        .config("spark.plugins", "org.apache.spark.CometPlugin")
        .config("spark.shuffle.manager", "org.apache.spark.sql.comet.execution.shuffle.CometShuffleManager")
        .config("spark.memory.offHeap.enabled", "true")
        .config("spark.memory.offHeap.size", "1g")
        .config("spark.comet.enabled", "true")
        .config("spark.comet.exec.enabled", "true")
        .config("spark.comet.write.iceberg.splitOperator.enabled", "true")
        .config("spark.comet.write.iceberg.enabled", "true")
        .config("spark.comet.exec.localTableScan.enabled", "true")
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


@pytest.fixture
def cns(spark):
    name = "co_" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE NAMESPACE lake.{name}")
    return name


def write(spark, sql):
    """Runs a write and returns its executed physical plan as text."""
    return spark.sql(sql)._jdf.queryExecution().executedPlan().toString()


def ran_native(plan):
    # A native write shows CometIcebergWrite under IcebergCommit; a
    # fallback keeps Iceberg's own IcebergWrite (or Spark's AppendData).
    return "CometIcebergWrite" in plan


def eligibility(catalog_uri, prefix, ns, table):
    url = f"{catalog_uri}/v1/{prefix}/namespaces/{ns}/tables/{table}/native-write-eligibility"
    with urllib.request.urlopen(url) as resp:
        return json.loads(resp.read())


def footers(tbl):
    """created_by of every data file of a PyIceberg table."""
    out = []
    for task in tbl.scan().plan_files():
        with tbl.io.new_input(task.file.file_path).open() as f:
            out.append(pq.ParquetFile(f).metadata.created_by)
    return out


def test_native_write_on_local_warehouse(spark, cns, catalog, catalog_uri, warehouse):
    t = f"lake.{cns}.native"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, name STRING) USING iceberg PARTITIONED BY (bucket(4, id))")
    plan = write(spark, f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    assert ran_native(plan), plan
    assert eligibility(catalog_uri, warehouse, cns, "native") == {"eligible": True, "reasons": [], "warnings": []}
    created = footers(catalog.load_table(f"{cns}.native"))
    assert created and all(c.endswith("(Comet)") for c in created), created
    assert sorted(r[0] for r in spark.sql(f"SELECT id FROM {t}").collect()) == [1, 2, 3]


# The eligibility matrix: (id, CREATE TABLE tail, the INSERT's values, the
# reason code the catalog should give, or None for eligible). Each row is
# created through Spark, judged by the endpoint, then written by Comet.
BASE_COLS = "(id BIGINT, name STRING, x DOUBLE, f FLOAT, d DATE)"
ROW = "(1, 'a', 1.5, CAST(2.5 AS FLOAT), DATE '2026-01-02')"
MATRIX = [
    ("plain-v2", "TBLPROPERTIES ('format-version'='2')", None),
    ("v1", "TBLPROPERTIES ('format-version'='1')", None),
    ("v3-append", "TBLPROPERTIES ('format-version'='3')", None),
    ("metrics-counts", "TBLPROPERTIES ('write.metadata.metrics.default'='counts')", None),
    ("metrics-none-column", "TBLPROPERTIES ('write.metadata.metrics.column.name'='none')", None),
    ("metrics-truncate", "TBLPROPERTIES ('write.metadata.metrics.default'='truncate(8)')", None),
    ("orc", "TBLPROPERTIES ('write.format.default'='orc')", "file-format"),
    ("avro", "TBLPROPERTIES ('write.format.default'='avro')", "file-format"),
    ("object-storage", "TBLPROPERTIES ('write.object-storage.enabled'='true')", "object-storage-layout"),
    ("parquet-mr-key", "TBLPROPERTIES ('parquet.enable.dictionary'='false')", "parquet-mr-property"),
    ("bloom-on", "TBLPROPERTIES ('write.parquet.bloom-filter-enabled.column.id'='true')", "bloom-filter"),
    ("bloom-off", "TBLPROPERTIES ('write.parquet.bloom-filter-enabled.column.id'='false')", None),
    ("unvetted-parquet", "TBLPROPERTIES ('write.parquet.bloom-filter-max-bytes'='1048576')", "unvetted-parquet-property"),
    ("snappy", "TBLPROPERTIES ('write.parquet.compression-codec'='snappy')", None),
    ("zstd-level-ok", "TBLPROPERTIES ('write.parquet.compression-codec'='zstd', 'write.parquet.compression-level'='9')", None),
    ("zstd-level-23", "TBLPROPERTIES ('write.parquet.compression-codec'='zstd', 'write.parquet.compression-level'='23')", "compression-level"),
    # (gzip above 9 is not tested here: iceberg-java's own writer fails on it.)
    ("gzip-level-9", "TBLPROPERTIES ('write.parquet.compression-codec'='gzip', 'write.parquet.compression-level'='9')", None),
    ("row-group-size", "TBLPROPERTIES ('write.parquet.row-group-size-bytes'='1048576', 'write.parquet.page-row-limit'='500')", None),
    ("cadence-min", "TBLPROPERTIES ('write.parquet.row-group-check-min-record-count'='50')", "row-group-cadence"),
    ("cadence-default", "TBLPROPERTIES ('write.parquet.row-group-check-max-record-count'='10000')", None),
    ("page-v2", "TBLPROPERTIES ('write.parquet.page-version'='v2')", "page-version"),
    ("io-impl", "TBLPROPERTIES ('io-impl'='org.apache.iceberg.hadoop.HadoopFileIO')", "custom-file-io"),
    # (write.location-provider.impl needs a public provider class on the
    # classpath, which neither Iceberg nor Comet ships: unit-tested only.)
    ("encryption", "TBLPROPERTIES ('encryption.key-id'='k1')", "encryption"),
    ("fanout", "PARTITIONED BY (name) TBLPROPERTIES ('write.spark.fanout.enabled'='true')", None),
    ("bucket", "PARTITIONED BY (bucket(4, id))", None),
    ("days-truncate", "PARTITIONED BY (days(d), truncate(2, name))", None),
    ("identity-string", "PARTITIONED BY (name)", None),
    # Comet 1.2.0 writes identity partitions on float/double natively (its
    # docs describe the fallback later releases add): the report follows 1.2.0,
    # with the float-identity-partition warning (WARNED).
    ("identity-double", "PARTITIONED BY (x)", None),
    ("identity-float", "PARTITIONED BY (f)", None),
]


WARNED = {"identity-double", "identity-float"}


@pytest.mark.parametrize("name,tail,code", MATRIX, ids=[m[0] for m in MATRIX])
def test_eligibility_matrix(spark, cns, catalog_uri, warehouse, name, tail, code):
    tname = name.replace("-", "_")
    t = f"lake.{cns}.{tname}"
    spark.sql(f"CREATE TABLE {t} {BASE_COLS} USING iceberg {tail}")
    verdict = eligibility(catalog_uri, warehouse, cns, tname)
    plan = write(spark, f"INSERT INTO {t} VALUES {ROW}")
    codes = [r["code"] for r in verdict["reasons"]]
    assert verdict["eligible"] == ran_native(plan), f"catalog said {verdict}, Comet planned:\n{plan}"
    assert codes == ([code] if code else []), verdict
    assert [w["code"] for w in verdict["warnings"]] == (["float-identity-partition"] if name in WARNED else []), verdict
    assert spark.sql(f"SELECT count(*) FROM {t}").collect()[0][0] == 1


# Rows that need a table Spark SQL cannot declare: created through
# PyIceberg, then written by Comet. (column type, format version, literal
# Spark inserts, reason code or None)
TYPED = [
    ("uuid", 2, "'f79c3e09-677c-4d8b-a4f3-3a8e7f2ad7b5'", "column-type"),
    ("variant", 3, "parse_json('{\"a\": 1}')", "column-type"),
    ("timestamp_ns", 3, "TIMESTAMP '2026-01-02 03:04:05'", "column-type"),
    ("decimal(38, 2)", 2, "CAST(1.25 AS DECIMAL(38, 2))", None),
    ("timestamptz", 2, "TIMESTAMP '2026-01-02 03:04:05'", None),
]


@pytest.mark.parametrize("typ,version,literal,code", TYPED, ids=[t[0] for t in TYPED])
def test_eligibility_column_types(spark, cns, catalog, catalog_uri, warehouse, typ, version, literal, code):
    from pyiceberg.schema import Schema
    from pyiceberg.types import IcebergType, LongType, NestedField
    if typ == "variant":  # PyIceberg 0.12 has no variant type; Spark 4.1 does
        spark.sql(f"CREATE TABLE lake.{cns}.typed (id BIGINT, c VARIANT) USING iceberg TBLPROPERTIES ('format-version'='3')")
    else:
        catalog.create_table(f"{cns}.typed", Schema(NestedField(1, "id", LongType(), required=False),
                                                     NestedField(2, "c", IcebergType.model_validate(typ), required=False)),
                             properties={"format-version": str(version)})
    verdict = eligibility(catalog_uri, warehouse, cns, "typed")
    try:
        plan = write(spark, f"INSERT INTO lake.{cns}.typed VALUES (1, {literal})")
    except Exception as e:  # reported, not hidden
        pytest.skip(f"Spark 4.1 + Iceberg 1.11 cannot write a {typ} column at all: {str(e).splitlines()[0][:200]}")
    codes = [r["code"] for r in verdict["reasons"]]
    assert verdict["eligible"] == ran_native(plan), f"catalog said {verdict}, Comet planned:\n{plan}"
    assert codes == ([code] if code else []), verdict


def test_native_write_on_s3_with_vended_credentials(spark, catalog_uri):
    """A warehouse on SeaweedFS with an STS storage profile: Spark gets no
    storage keys, only the catalog's vended credentials, which Comet hands
    to iceberg-rust. The write runs natively and the endpoint agrees."""
    ep = os.environ.get("SEAWEED_S3_ENDPOINT")
    if not ep:
        pytest.skip("SEAWEED_S3_ENDPOINT is not set (integration/run.sh starts SeaweedFS)")
    from pyiceberg.catalog import load_catalog
    from s3warehouse import create_warehouse
    wh = "s3co_" + uuid.uuid4().hex[:6]
    create_warehouse(catalog_uri, wh)
    c = "spark.sql.catalog." + wh
    for k, v in {"": "org.apache.iceberg.spark.SparkCatalog", ".type": "rest", ".uri": catalog_uri,
                 ".warehouse": wh, ".header.X-Iceberg-Access-Delegation": "vended-credentials"}.items():
        spark.conf.set(c + k, v)
    spark.sql(f"CREATE NAMESPACE {wh}.ns")
    spark.sql(f"CREATE TABLE {wh}.ns.events (id BIGINT, d DATE) USING iceberg PARTITIONED BY (days(d))")
    assert eligibility(catalog_uri, wh, "ns", "events") == {"eligible": True, "reasons": [], "warnings": []}
    plan = write(spark, f"INSERT INTO {wh}.ns.events VALUES (1, DATE '2026-01-01'), (2, DATE '2026-01-02')")
    assert ran_native(plan), plan
    assert sorted(r[0] for r in spark.sql(f"SELECT id FROM {wh}.ns.events").collect()) == [1, 2]
    vended = load_catalog("vended", **{"type": "rest", "uri": catalog_uri, "warehouse": wh})  # no s3.* keys
    created = footers(vended.load_table("ns.events"))
    assert len(created) == 2 and all(c.endswith("(Comet)") for c in created), created


def test_remote_signing_falls_back(spark, catalog_uri):
    """A warehouse on SeaweedFS that signs and cannot vend: Spark writes
    through the catalog's signer. Comet's native writer has no remote
    signing, so the report says not eligible (remote-signing) and the write
    falls back to iceberg-java, which signs; the rows land either way."""
    ep = os.environ.get("SEAWEED_S3_ENDPOINT")
    if not ep:
        pytest.skip("SEAWEED_S3_ENDPOINT is not set (integration/run.sh starts SeaweedFS)")
    from s3warehouse import create_warehouse
    wh = "s3sign_" + uuid.uuid4().hex[:6]
    create_warehouse(catalog_uri, wh, signing=True)
    c = "spark.sql.catalog." + wh
    for k, v in {"": "org.apache.iceberg.spark.SparkCatalog", ".type": "rest", ".uri": catalog_uri,
                 ".warehouse": wh, ".io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
                 ".header.X-Iceberg-Access-Delegation": "remote-signing"}.items():
        spark.conf.set(c + k, v)
    spark.sql(f"CREATE NAMESPACE {wh}.ns")
    spark.sql(f"CREATE TABLE {wh}.ns.events (id BIGINT) USING iceberg")
    verdict = eligibility(catalog_uri, wh, "ns", "events")
    assert not verdict["eligible"]
    assert [(r["code"], r["key"]) for r in verdict["reasons"]] == [("remote-signing", "s3.remote-signing-enabled")], verdict
    assert [w["code"] for w in verdict["warnings"]] == ["remote-signing-native-scan"], verdict
    plan = write(spark, f"INSERT INTO {wh}.ns.events VALUES (1), (2)")
    assert not ran_native(plan), plan
    # What the warning says: Comet's native scan cannot read the table...
    with pytest.raises(Exception, match="signing credential"):
        spark.sql(f"SELECT id FROM {wh}.ns.events").collect()
    # ...and Spark's own scan, which signs, can.
    spark.conf.set("spark.comet.scan.icebergNative.enabled", "false")
    try:
        assert sorted(r[0] for r in spark.sql(f"SELECT id FROM {wh}.ns.events").collect()) == [1, 2]
    finally:
        spark.conf.set("spark.comet.scan.icebergNative.enabled", "true")


def test_v3_rewrites_fall_back(spark, cns, catalog_uri, warehouse):
    """The report is per table: a v3 table is eligible because its appends
    run natively, but its copy-on-write DELETE carries row lineage and
    falls back (docs/credentials.md). This pins both halves."""
    t = f"lake.{cns}.v3"
    spark.sql(f"""CREATE TABLE {t} (id BIGINT) USING iceberg TBLPROPERTIES (
        'format-version'='3', 'write.delete.mode'='copy-on-write')""")
    assert eligibility(catalog_uri, warehouse, cns, "v3")["eligible"]
    assert ran_native(write(spark, f"INSERT INTO {t} VALUES (1), (2), (3)"))
    plan = write(spark, f"DELETE FROM {t} WHERE id = 2")
    assert not ran_native(plan), plan
    assert sorted(r[0] for r in spark.sql(f"SELECT id FROM {t}").collect()) == [1, 3]


def test_void_partition_on_dropped_column(spark, cns, catalog_uri, warehouse):
    """A v1 table keeps a dropped partition field as void; once its source
    column is dropped too, beside a live field, Comet falls back and
    iceberg-java cannot write either."""
    t = f"lake.{cns}.voided"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, cat STRING) USING iceberg PARTITIONED BY (cat, bucket(2, id)) "
              "TBLPROPERTIES ('format-version'='1')")
    spark.sql(f"ALTER TABLE {t} DROP PARTITION FIELD cat")
    try:
        spark.sql(f"ALTER TABLE {t} DROP COLUMN cat")
    except Exception as e:  # reported, not hidden
        pytest.skip(f"Iceberg 1.11 refuses to drop the void field's source column: {str(e).splitlines()[0][:200]}")
    verdict = eligibility(catalog_uri, warehouse, cns, "voided")
    assert [r["code"] for r in verdict["reasons"]] == ["void-partition-dropped-source"], verdict
    try:
        plan = write(spark, f"INSERT INTO {t} VALUES (1)")
    except Exception:
        return  # iceberg-java's own failure: nothing was written natively
    assert not ran_native(plan), plan
