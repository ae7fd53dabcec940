"""lakehold.spark: column updates and scans of v4 tables on Spark 4.1
local[2], on the local warehouse and on SeaweedFS through vended
credentials (the driver holds no storage keys; executors get what the
catalog vended).

Each update is checked against the library's own scan, and commits once:
the snapshot count grows by one. One update runs with a task that fails on
its first attempt after writing a column file (master local[2,2] gives
each task a retry): Spark retries it, the commit still lists each base
once, and the failed attempt's file is left unreferenced, where the
catalog's remove-orphan-files finds it (local warehouse). One update
with a checkpoint has fn fail on one base: the rerun builds only the bases
the first run did not finish, and commits once.
"""
import datetime
import json
import os
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

lakehold = pytest.importorskip("lakehold")
pyspark = pytest.importorskip("pyspark")
from lakehold import spark as lspark  # noqa: E402
from pyspark import TaskContext  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

URI = os.environ["CATALOG_URI"]
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.string()),
                    pa.field("score", pa.float64())])


@pytest.fixture(scope="module")
def spark():
    # Executors run this venv's Python, which has lakehold (the
    # spark.pyspark.python setting is not read in local mode).
    os.environ["PYSPARK_PYTHON"] = sys.executable
    s = (SparkSession.builder.master("local[2,2]").appName("lakehold-spark-columns")
         .config("spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false")
         .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
         .getOrCreate())
    yield s
    s.stop()


@pytest.fixture(scope="module", params=["local", "seaweedfs"])
def catalog(request):
    if request.param == "local":
        wh = os.environ["CATALOG_WAREHOUSE"]
    else:
        from s3warehouse import create_warehouse
        wh = "sparkcol_" + uuid.uuid4().hex[:6]
        create_warehouse(URI, wh)
    return lakehold.load_catalog("spark", uri=URI, warehouse=wh)


@pytest.fixture
def table(catalog):
    ns = "sc_" + uuid.uuid4().hex[:8]
    catalog.create_namespace(ns)
    t = catalog.create_table((ns, "t"), SCHEMA)
    for start in range(0, 60, 10):  # six base files
        t.append(pa.table({"id": list(range(start, start + 10)), "region": ["eu", "us"] * 5,
                           "score": [0.0] * 10}, schema=SCHEMA))
    return t


def rows(t):
    return sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r["id"])


def test_update_columns_once_even_with_a_retried_task(spark, table):
    before = len(table.snapshots())

    def double_id(batch: pa.Table) -> pa.Table:
        ctx = TaskContext.get()
        out = pa.table({"score": pc.multiply(batch.column("id"), 2).cast(pa.float64())})
        if ctx is not None and ctx.partitionId() == 0 and ctx.attemptNumber() == 0:
            # Fail this attempt after its first base's column file is written.
            double_id.seen = getattr(double_id, "seen", 0) + 1
            if double_id.seen == 2:
                raise RuntimeError("simulated executor failure")
        return out

    snap = lspark.update_columns(spark, table, double_id, ["id"], ["score"], partitions=2,
                                 snapshot_properties={"job": "spark-refresh"})
    table.refresh()
    assert len(table.snapshots()) == before + 1, "one commit"
    assert table.current_snapshot_id == snap
    assert table.snapshot(snap)["summary"]["job"] == "spark-refresh"
    assert [r["score"] for r in rows(table)] == [2.0 * i for i in range(60)]
    listed = table._rest.request("GET", f"{table._path}/column-files")["data-files"]
    assert len(listed) == 6 and all(len(d["column-files"]) == 1 for d in listed), "one column file per base"
    if table.location.startswith("file:"):
        referenced = {d["column-files"][0]["location"].rsplit("/", 1)[-1] for d in listed}
        written = {p.name for p in Path(table.location.removeprefix("file://")).glob("data/*-cols.parquet")}
        assert referenced < written and len(written - referenced) == 1, \
            "the failed attempt's column file is left unreferenced, for the orphan clean-up"
        # The clean-up finds it once it is old enough (at least an hour:
        # its time is set back rather than waited for).
        (orphan,) = written - referenced
        aged = time.time() - 7200
        os.utime(Path(table.location.removeprefix("file://")) / "data" / orphan, (aged, aged))
        ns, name = table.identifier
        cutoff = datetime.datetime.fromtimestamp(time.time() - 3660, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        req = urllib.request.Request(
            f"{URI}/management/v1/warehouses/{os.environ['CATALOG_WAREHOUSE']}/namespaces/{ns}/tables/{name}/remove-orphan-files",
            method="POST", data=json.dumps({"older-than": cutoff}).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req) as resp:
            found = json.loads(resp.read())
        assert found["orphan-files"] == [f"data/{orphan}"], found


def test_update_columns_resumes_from_a_checkpoint(spark, table, tmp_path):
    # fn fails on one base (a model server going away): the driver records
    # the bases the executors finished; the rerun builds only the others.
    before = len(table.snapshots())
    calls, fail, ck = tmp_path / "calls", tmp_path / "fail", tmp_path / "update.ckpt"
    calls.mkdir()
    fail.write_text("")

    def triple_id(batch: pa.Table) -> pa.Table:
        first = batch.column("id")[0].as_py()
        (calls / f"{first}-{uuid.uuid4().hex}").write_text("")
        if first == 30 and fail.exists():
            raise RuntimeError("model server down")
        return pa.table({"score": pc.multiply(batch.column("id"), 3).cast(pa.float64())})

    def called():
        got = sorted(int(p.name.split("-")[0]) for p in calls.iterdir())
        for p in calls.iterdir():
            p.unlink()
        return got

    with pytest.raises(lakehold.LakeholdError) as err:
        lspark.update_columns(spark, table, triple_id, ["id"], ["score"], checkpoint=str(ck))
    assert "model server down" in str(err.value) and str(ck) in str(err.value), err.value
    first = called()
    done = json.loads(ck.read_text())["done"]
    assert len(done) == len(first) - 1 and 30 in first, (first, done)
    table.refresh()
    assert len(table.snapshots()) == before, "nothing committed"
    fail.unlink()
    snap = lspark.update_columns(spark, table, triple_id, ["id"], ["score"], checkpoint=str(ck))
    second = called()
    assert sorted(second) == sorted(set(range(0, 60, 10)) - (set(first) - {30})), (first, second)
    table.refresh()
    assert len(table.snapshots()) == before + 1 and table.current_snapshot_id == snap, "one commit"
    assert [r["score"] for r in rows(table)] == [3.0 * i for i in range(60)]
    assert not ck.exists()


def test_update_with_a_row_filter(spark, table):
    lspark.update_columns(spark, table, lambda b: pa.table({"score": pa.array([5.0] * b.num_rows)}), ["id"],
                          ["score"], row_filter="region == 'eu'")
    got = rows(table.refresh())
    assert [r["score"] for r in got] == [5.0 if r["region"] == "eu" else 0.0 for r in got]


def test_merge_columns_from_a_dataframe(spark, table):
    before = len(table.snapshots())
    src = spark.createDataFrame([(i, float(i) + 0.5) for i in range(5, 25)], "id long, score double")
    lspark.merge_columns(spark, table, src, key="id")
    got = rows(table.refresh())
    assert len(table.snapshots()) == before + 1
    assert [r["score"] for r in got] == [i + 0.5 if 5 <= i < 25 else 0.0 for i in range(60)]

    with pytest.raises(lakehold.errors.MergeKeyError):
        lspark.merge_columns(spark, table, spark.createDataFrame([(1000, 1.0)], "id long, score double"), key="id")
    with pytest.raises(lakehold.errors.MergeKeyError):
        lspark.merge_columns(spark, table, spark.createDataFrame([(1, 1.0), (1, 2.0)], "id long, score double"),
                             key="id")
    assert len(table.refresh().snapshots()) == before + 1, "a refused merge commits nothing"


def test_read_matches_the_library_scan(spark, table):
    table.merge_columns(pa.table({"id": [3, 33], "score": [7.0, 8.0]}), key="id")
    df = lspark.read(spark, table, with_row_lineage=True)
    got = sorted((r.id, r.region, r.score, r._row_id) for r in df.collect())
    want = sorted((r["id"], r["region"], r["score"], r["_row_id"])
                  for r in table.scan(with_row_lineage=True).to_arrow().to_pylist())
    assert got == want
    assert lspark.read(spark, table, row_filter="score > 1").count() == 2


def _column_files_on_disk(t):
    """The column files under a local table's data/ (None elsewhere)."""
    if not t.location.startswith("file:"):
        return None
    return {p.name for p in Path(t.location.removeprefix("file://")).glob("data/*-cols.parquet")}


def test_refused_input_commits_and_leaves_nothing(spark, table):
    before, files = len(table.refresh().snapshots()), _column_files_on_disk(table)

    def refused(reason, call):
        with pytest.raises(lakehold.errors.ValidationError) as e:
            call()
        assert e.value.reason == reason, (e.value.reason, e.value.message)
        assert len(table.refresh().snapshots()) == before, "nothing committed"
        assert _column_files_on_disk(table) == files, "no column file left behind"

    # fn's result checked on the executors, raised on the driver as itself;
    # here only one base's result is bad, the other bases' files are deleted.
    refused("type-mismatch", lambda: lspark.update_columns(
        spark, table, lambda b: pa.table({"score": pa.array(["x"] * b.num_rows) if 25 in b["id"].to_pylist()
                                          else pa.array([1.0] * b.num_rows)}), ["id"], ["score"], partitions=2))
    refused("undeclared-column", lambda: lspark.update_columns(
        spark, table, lambda b: pa.table({"score": [1.0] * b.num_rows, "region": ["x"] * b.num_rows}),
        ["id"], ["score"]))
    # The source's schema is checked on the driver.
    refused("key-type-mismatch", lambda: lspark.merge_columns(
        spark, table, spark.createDataFrame([(1.0, 1.0)], "id double, score double"), key="id"))
    refused("key-type-mismatch", lambda: lspark.merge_columns(
        spark, table, spark.createDataFrame([(1, 1.0)], "id int, score double"), key="id"))
    refused("type-mismatch", lambda: lspark.merge_columns(
        spark, table, spark.createDataFrame([(1, "1.5")], "id long, score string"), key="id"))
    refused("unknown-column", lambda: lspark.merge_columns(
        spark, table, spark.createDataFrame([(1, 1.0)], "id long, extra double"), key="id"))
    # The safe-cast opt-in: int keys for a long key, float values for a double.
    lspark.merge_columns(spark, table, spark.createDataFrame([(1, 1.5)], "id int, score float"), key="id",
                         cast="safe")
    assert [r["score"] for r in rows(table.refresh())][:3] == [0.0, 1.5, 0.0]
