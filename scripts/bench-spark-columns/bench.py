"""A column refresh of a large table on Spark local[2]: Spark's own
copy-on-write UPDATE of one column of a v3 table against
lakehold.spark.update_columns on a v4 table holding the same rows, printed
side by side (bytes written, wall time, ratios). Run by
scripts/bench-spark-columns.sh, which starts the catalog."""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid

import pyarrow as pa
import pyarrow.compute as pc

import lakehold
from lakehold import spark as lspark

PAYLOAD = 8  # double feature columns besides id, label and score


def arrow_rows(start: int, n: int) -> pa.Table:
    """Rows start..start+n-1, the same values Spark generates below."""
    ids = pa.array(range(start, start + n), pa.int64())
    cols = {"id": ids, "label": pc.binary_join_element_wise("row-", pc.cast(ids, pa.string()), "")}
    for k in range(PAYLOAD):
        cols[f"f{k}"] = pc.divide(pc.cast(pc.multiply(ids, k + 1), pa.float64()), 7.0)
    cols["score"] = pa.array([0.0] * n, pa.float64())
    return pa.table(cols)


def spark_session(args: argparse.Namespace):
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    return (SparkSession.builder.master("local[2]").appName("bench-spark-columns")
            .config("spark.jars", args.spark_jars)
            .config("spark.driver.memory", "6g")
            .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
            .config("spark.sql.catalog.lake", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.lake.type", "rest")
            .config("spark.sql.catalog.lake.uri", args.uri)
            .config("spark.sql.catalog.lake.warehouse", args.warehouse)
            .config("spark.sql.shuffle.partitions", str(args.files))
            .config("spark.ui.enabled", "false")
            .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
            .getOrCreate())


def spark_cow(spark, ns: str, rows: int, files: int) -> tuple[int, float]:
    """Bytes and seconds of UPDATE ... SET score on a v3 copy-on-write table."""
    from pyspark.sql import functions as F

    t = f"lake.{ns}.cow"
    cols = [F.col("id"), F.concat(F.lit("row-"), F.col("id").cast("string")).alias("label")]
    cols += [((F.col("id") * (k + 1)).cast("double") / 7.0).alias(f"f{k}") for k in range(PAYLOAD)]
    cols += [F.lit(0.0).alias("score")]
    df = spark.range(rows).repartition(files).select(*cols)
    spark.sql(f"""CREATE TABLE {t} (id BIGINT, label STRING, {', '.join(f'f{k} DOUBLE' for k in range(PAYLOAD))}, score DOUBLE)
        USING iceberg TBLPROPERTIES ('format-version'='3', 'write.update.mode'='copy-on-write',
        'write.distribution-mode'='none')""")
    df.writeTo(t).append()
    n_files = spark.sql(f"SELECT count(*) FROM {t}.files").collect()[0][0]
    start = time.perf_counter()
    spark.sql(f"UPDATE {t} SET score = id * 2.0")
    secs = time.perf_counter() - start
    summary = spark.sql(f"SELECT summary FROM {t}.snapshots ORDER BY committed_at DESC LIMIT 1").collect()[0][0]
    bad = spark.sql(f"SELECT count(*) FROM {t} WHERE score <> id * 2.0").collect()[0][0]
    assert bad == 0, f"{bad} rows of the copy-on-write table are wrong"
    print(f"  copy-on-write: {n_files} files before, {summary.get('added-data-files')} rewritten", file=sys.stderr)
    return int(summary.get("added-files-size", 0)), secs


def column_files(spark, cat: lakehold.Catalog, ns: str, rows: int, files: int) -> tuple[int, float]:
    """Bytes and seconds of lakehold.spark.update_columns on a v4 table."""
    first = arrow_rows(0, 1)
    t = cat.create_table((ns, "cf"), first.schema)
    per = rows // files
    for i in range(files):
        t.append(arrow_rows(i * per, per if i < files - 1 else rows - i * per))
    start = time.perf_counter()
    snap = lspark.update_columns(spark, t, lambda b: pa.table({"score": pc.multiply(pc.cast(b.column("id"), pa.float64()), 2.0)}),
                                 ["id"], ["score"], partitions=files)
    secs = time.perf_counter() - start
    listed = t._rest.request("GET", f"{t._path}/column-files")["data-files"]
    size = sum(cf["file-size-in-bytes"] for d in listed for cf in d["column-files"])
    assert snap == t.current_snapshot_id and len(listed) == files
    bad = lspark.read(spark, t, selected_fields=("id", "score")).where("score <> id * 2.0").count()
    assert bad == 0, f"{bad} rows of the v4 table are wrong"
    return size, secs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--spark-jars", required=True)
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--files", type=int, default=100)
    args = p.parse_args()
    spark = spark_session(args)
    cat = lakehold.load_catalog("bench", uri=args.uri, warehouse=args.warehouse)
    ns = "bench_" + uuid.uuid4().hex[:6]
    cat.create_namespace(ns)
    print(f"bench-spark-columns: {args.rows:,} rows in {args.files} files, {PAYLOAD + 3} columns", file=sys.stderr)
    cow_bytes, cow_secs = spark_cow(spark, ns, args.rows, args.files)
    cf_bytes, cf_secs = column_files(spark, cat, ns, args.rows, args.files)
    spark.stop()
    print("| contender | bytes written | time |")
    print("|---|---|---|")
    print(f"| Spark UPDATE, copy-on-write (v3) | {cow_bytes / 1e6:,.1f} MB | {cow_secs:.1f} s |")
    print(f"| lakehold.spark.update_columns (v4 column files) | {cf_bytes / 1e6:,.1f} MB | {cf_secs:.1f} s |")
    print(f"| column files / copy-on-write | {cf_bytes / cow_bytes:.3f}× | {cf_secs / cow_secs:.2f}× |")


if __name__ == "__main__":
    main()
