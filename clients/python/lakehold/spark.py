"""Column updates and scans of Lakehold v4 tables on a Spark cluster.

:func:`update_columns`, :func:`merge_columns` and :func:`read` do what the
:class:`~lakehold.Table` methods of the same names do, with the work spread
over Spark executors (PySpark 4.0 or later; no JVM plugin, ``lakehold``
installed where the executors run Python):

* the driver loads the table (asking for vended credentials), plans on the
  catalog and, for updates, commits **once**;
* executors read base files and write column files with the storage access
  the catalog vended to the driver (``mapInArrow`` over the planned base
  files; ``merge_columns`` joins the source with the table's keys and
  writes one column file per base in ``groupBy(...).applyInArrow``).

Every task's output names the base file it wrote for, so a task that Spark
retries replaces its failed attempt's output and the commit lists each base
once: a retried task never makes a second commit. The file a failed
attempt wrote, and every file of a driver lost before its commit, is an
orphan under the table's ``data/`` that ``remove-orphan-files`` finds. The
commit pins the planned snapshot (409 CommitFailedError when the table
moved meanwhile: run the update again) and keeps one Idempotency-Key over
its retries.

Vended credentials expire (an hour by default): a job longer than that
should run with credentials of its own in the catalog properties.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _checkpoint, _colupdate, _commit, _validate
from ._scantasks import ScanTask
from .errors import CommitStateUnknownError, LakeholdError, MergeKeyError, ValidationError
from .table import Table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["merge_columns", "read", "update_columns"]

# ``error``: a ValidationError an executor raised for its base (JSON), so
# the driver raises it as itself rather than as Spark's task failure.
_ENTRY_SCHEMA = "data_file string, entry string, error string"
_ENTRY_ARROW = pa.schema([pa.field("data_file", pa.string()), pa.field("entry", pa.string()),
                          pa.field("error", pa.string())])


def update_columns(spark: SparkSession, table: Table, fn: Callable[[pa.Table], Any], inputs: list[str],
                   outputs: list[str] | pa.Schema, *, row_filter: Any = None,
                   snapshot_properties: dict[str, str] | None = None, partitions: int | None = None,
                   cast: Literal["exact", "safe"] = "exact", checkpoint: str | os.PathLike[str] | None = None) -> int:
    """:meth:`Table.update_columns` on Spark: ``fn`` runs on the executors,
    once per base file, and must be picklable (cloudpickle). ``partitions``
    is how many Spark tasks share the bases (default: twice the default
    parallelism, at most one per base). Returns the new snapshot id (the
    current one when no base changed). Raises what the Table method raises
    (an executor's ValidationError for ``fn``'s result is raised on the
    driver, after the other bases' files are deleted), and Spark's error
    when a task fails otherwise after its retries (nothing is committed
    then).

    With ``checkpoint`` (a path on the driver) the driver records every
    base the executors report as built before it commits; a rerun with the
    same path has the executors build only the other bases (and those
    changed since), and the file is removed after the commit. Then an
    exception of ``fn`` does not fail the Spark task: the executor stops
    taking bases of its partition, reports it, and the driver records the
    finished bases and raises it as LakeholdError (ValidationError for a
    result that does not fit). The executors do not talk to the catalog,
    so a catalog that stops answering is met at the commit, after every
    base is recorded."""
    mode = _validate.cast_mode(cast)
    fields = table._output_fields(outputs, mode)
    table.refresh()
    snap = _snapshot(table)
    inputs = list(inputs)
    job = _colupdate.map_job(table, fn, inputs, fields, row_filter, None, mode)
    ck = _colupdate._open_checkpoint(table, job, checkpoint)
    if ck is not None and (landed := _colupdate._landed(table, ck)) is not None:
        ck.remove()  # an earlier run's commit landed; its answer was lost
        return landed
    body: dict[str, Any] = {"snapshot-id": snap}
    if job.plan_filter is not None:
        body["filter"] = job.plan_filter
    tasks = table._plan(body)
    if ck is not None:
        _colupdate._resume(table, job, ck, tasks, snap)
    todo = [t for t in tasks if _colupdate.state_key(t) not in job._cache]
    state = table._worker_state()
    catch_all = ck is not None

    def work(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        t = Table._for_worker(state)
        j = _colupdate.map_job(t, fn, inputs, fields, row_filter, None, mode)
        failed = False
        for b in batches:
            out = []
            for raw in b.column(0).to_pylist():
                task = json.loads(raw)
                if failed:
                    continue  # a base of this partition failed: take no more
                try:
                    out.append(_entry_row(task, _colupdate._build(t, j, task).entry))
                except ValidationError as e:
                    out.append(_error_row(task, e))
                    failed = catch_all
                except Exception as e:
                    if not catch_all:
                        raise
                    out.append(_failure_row(task, e))
                    failed = True
            yield _entry_batch(out)

    rows = _task_frame(spark, todo, partitions).mapInArrow(work, _ENTRY_SCHEMA).collect() if todo else []
    if ck is None:
        return _commit_entries(table, snap, rows, snapshot_properties)
    return _commit_checkpointed(table, job, ck, snap, tasks, rows, snapshot_properties)


def _commit_checkpointed(table: Table, job: _colupdate.Job, ck: _checkpoint.Checkpoint, snap: int,
                         tasks: list[ScanTask], rows: list[Any],
                         snapshot_properties: dict[str, str] | None) -> int:
    """Record the executors' reports in ``ck``, raise the first failure
    they reported (the finished bases stay recorded), else commit every
    planned base's file once, pinned to ``snap``, and remove ``ck``."""
    by_file = {t["data-file"]["file-path"]: t for t in tasks}
    for r in rows:
        if r.error:
            continue
        key = _colupdate.state_key(by_file[r.data_file])
        entry = json.loads(r.entry) if r.entry else None
        ck.record(key, json.loads(key), entry, None)
        job._cache[key] = _colupdate._Built(entry)
    errors = [json.loads(r.error) for r in rows if r.error]
    if errors:
        e = errors[0]
        where = (f"the checkpoint {ck.path} holds {len(ck.done)} of {len(tasks)} bases: run the same update "
                 f"with checkpoint={ck.path!r} to build only the rest and commit")
        if e.get("failure"):
            raise LakeholdError(f"fn failed on an executor ({e['failure']}: {e['message']}); {where}")
        raise ValidationError(f"{e['message']}; {where}", status=None, reason=e.get("reason"),
                              details=e.get("details"))
    built = [job._cache.get(_colupdate.state_key(t)) for t in tasks]
    if any(b is None for b in built):
        raise LakeholdError("an executor reported no result for a base: run the update again to resume")
    entries = [b.entry for b in built if b is not None and b.entry is not None]
    if not entries:
        ck.remove()
        return snap
    req: dict[str, Any] = {"column-files": entries, "requirements": [
        {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": snap}],
        "snapshot-properties": {**(snapshot_properties or {}), _checkpoint.SNAPSHOT_PROPERTY: ck.id}}
    res = _commit.post(table._rest, f"{table._path}/column-files", req)
    table._apply(res)
    ck.remove()
    return int(table.current_snapshot_id or 0)


def merge_columns(spark: SparkSession, table: Table, source: DataFrame, key: str, columns: list[str] | None = None,
                  *, snapshot_properties: dict[str, str] | None = None, partitions: int | None = None,
                  cast: Literal["exact", "safe"] = "exact") -> int:
    """:meth:`Table.merge_columns` with a Spark DataFrame as the source:
    the table's keys (live rows only) are read on the executors and joined
    with ``source`` on ``key``; each base with a matched row gets one column
    file. The source's schema (as Arrow) and its required columns' nulls
    are checked on the driver as the Table method checks them:
    ValidationError, MergeKeyError for null or duplicate source keys and
    keys no live row has (nothing is written or committed), and the
    catalog's errors."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_type

    mode = _validate.cast_mode(cast)
    cols = list(columns) if columns is not None else [c for c in source.columns if c != key]
    if not cols:
        raise _validate.fail(_validate.NO_COLUMNS, "merge_columns needs at least one column besides the key")
    absent = [c for c in [key, *cols] if c not in source.columns]
    if absent:
        raise _validate.fail(_validate.MISSING_COLUMN, f"columns {absent} are not in the source", column=absent[0])
    table.refresh()
    fields = table._output_fields(cols, mode)
    schema = table.schema()
    if key not in schema.names:
        raise _validate.fail(_validate.UNKNOWN_COLUMN, f"key column {key!r} is not in the table", column=key)
    key_type = schema.field(key).type
    _check_source_schema(source, schema.field(key), fields, mode)
    src = source.select(F.col(key).cast(from_arrow_type(key_type)).alias(key), *cols)
    _check_source_keys(src, key)
    _check_required(src, fields)
    snap = _snapshot(table)
    tasks = table._plan({"snapshot-id": snap})
    state = table._worker_state()
    keys_schema = pa.schema([pa.field("__base", pa.int32()), pa.field("__pos", pa.int64()), pa.field(key, key_type)])

    def read_keys(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        t = Table._for_worker(state)
        read_base = _colupdate.base_reader(t)
        for b in batches:
            for i in b.column(0).to_pylist():
                task = tasks[i]
                live = _colupdate.live_mask(t, task)
                keys = read_base(task, [key], False).column(key)
                pos = np.flatnonzero(live)
                yield pa.RecordBatch.from_arrays(
                    [pa.array(np.full(len(pos), i, dtype=np.int32)), pa.array(pos.astype(np.int64)),
                     keys.take(pa.array(pos)).combine_chunks().cast(key_type)], schema=keys_schema)

    keys_df = _index_frame(spark, len(tasks), partitions).mapInArrow(read_keys, _spark_schema(keys_schema))
    missing = src.select(key).join(keys_df.select(key), on=key, how="left_anti").limit(20).collect()
    if missing:
        found = [r[0] for r in missing]
        raise MergeKeyError(f"source key(s) match no live row of the table, e.g. {found[:5]}", found,
                            reason="unmatched-key")
    cf_fields = [_colupdate.nullable(f) for f in fields]

    def build(group: pa.Table) -> pa.Table:
        task = tasks[group.column("__base")[0].as_py()]
        t = Table._for_worker(state)
        try:
            data = _merged_columns(t, task, group, fields, cf_fields, mode)
            built = _colupdate._build(t, _colupdate.Job(build=lambda _task: (data, None)), task)
            row = _entry_row(task, built.entry)
        except ValidationError as e:
            row = _error_row(task, e)
        return pa.Table.from_pylist([row], schema=_ENTRY_ARROW)

    joined = keys_df.join(src, on=key, how="inner")
    rows = joined.groupBy("__base").applyInArrow(build, _ENTRY_SCHEMA).collect()
    return _commit_entries(table, snap, rows, snapshot_properties)


def _merged_columns(t: Table, task: ScanTask, group: pa.Table, fields: list[pa.Field],
                    cf_fields: list[pa.Field], cast: _validate.CastMode) -> pa.Table:
    """One base's column-file rows from its matched rows (``__pos`` and the
    new values of ``fields``), checked against the table's fields: the
    values alone when every row matched, else blended with the current
    values and lineage."""
    cols = [f.name for f in fields]
    rows = int(task["data-file"]["record-count"])
    pos = group.column("__pos").to_numpy()
    idx = np.full(rows, -1, dtype=np.int64)
    idx[pos] = np.arange(len(pos))
    take = pa.array(idx, mask=idx < 0)
    new = _validate.conform(group.select(cols), fields, cast, what="merge_columns source",
                            schema=pa.schema(cf_fields)).take(take)
    if len(pos) == rows:
        return new
    cur = _colupdate.base_reader(t)(task, cols, True)
    return _colupdate.blend(pc.is_valid(take), new, cur, cf_fields)


def read(spark: SparkSession, table: Table, row_filter: Any = None, selected_fields: tuple[str, ...] = ("*",),
         snapshot_id: int | None = None, with_row_lineage: bool = False, partitions: int | None = None) -> DataFrame:
    """The rows of :meth:`Table.scan` as a Spark DataFrame: planned now on
    the driver, read (column files stitched, deletes applied, filter
    applied) by the executors when the DataFrame is evaluated. Field ids are
    not carried into Spark's schema."""
    from .scan import Scan

    scan = table.scan(row_filter, selected_fields, snapshot_id, with_row_lineage)
    tasks = scan.plan_files()
    spark_schema = _spark_schema(scan.schema)
    target = _arrow_of(spark_schema)
    state = table._worker_state()

    def work(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        t = Table._for_worker(state)
        s = Scan(t, row_filter=row_filter, selected_fields=selected_fields, snapshot_id=snapshot_id,
                 with_row_lineage=with_row_lineage)
        for b in batches:
            for raw in b.column(0).to_pylist():
                rows = s._read(json.loads(raw), s._read_columns, s.schema.names)
                yield from rows.cast(target).to_batches()

    return _task_frame(spark, tasks, partitions).mapInArrow(work, spark_schema)


# --- helpers -------------------------------------------------------------------

def _snapshot(table: Table) -> int:
    snap = table.current_snapshot_id
    if snap is None:
        raise LakeholdError("the table has no snapshot: append data before updating columns")
    return snap


def _partitions(spark: SparkSession, n: int, partitions: int | None) -> int:
    return max(1, min(n, partitions or spark.sparkContext.defaultParallelism * 2))


def _task_frame(spark: SparkSession, tasks: list[ScanTask], partitions: int | None) -> DataFrame:
    """One row per planned task (its JSON), spread over the partitions."""
    rows = [(json.dumps(t),) for t in tasks]
    return spark.createDataFrame(rows, "task string").repartition(_partitions(spark, len(rows), partitions))


def _index_frame(spark: SparkSession, n: int, partitions: int | None) -> DataFrame:
    """One row per task index 0..n-1, spread over the partitions."""
    return spark.createDataFrame([(i,) for i in range(n)], "i int").repartition(_partitions(spark, n, partitions))


def _entry_row(task: ScanTask, entry: dict[str, Any] | None) -> dict[str, Any]:
    return {"data_file": task["data-file"]["file-path"], "entry": json.dumps(entry) if entry is not None else None,
            "error": None}


def _error_row(task: ScanTask, e: ValidationError) -> dict[str, Any]:
    err = {"message": e.message, "reason": e.reason, "details": e.details}
    return {"data_file": task["data-file"]["file-path"], "entry": None, "error": json.dumps(err, default=str)}


def _failure_row(task: ScanTask, e: Exception) -> dict[str, Any]:
    err = {"message": str(e), "failure": type(e).__name__}
    return {"data_file": task["data-file"]["file-path"], "entry": None, "error": json.dumps(err, default=str)}


def _entry_batch(rows: list[dict[str, Any]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(rows, schema=_ENTRY_ARROW)


def _spark_schema(schema: pa.Schema) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(pa.schema([f.remove_metadata() for f in schema]))


def _arrow_of(spark_schema: Any) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(spark_schema)


def _check_source_schema(source: DataFrame, key: pa.Field, fields: list[pa.Field], cast: _validate.CastMode) -> None:
    """ValidationError when the Arrow type of the source's key or a merged
    column (as Spark hands it to Arrow) does not fit the table's field."""
    arrow = _arrow_of(source.schema)
    try:
        _validate.check_type(arrow.field(key.name).type, key.type, cast, key.name)
    except _validate._Mismatch as m:
        raise _validate.fail(_validate.KEY_TYPE, f"merge key {m.message}", column=key.name) from None
    for f in fields:
        try:
            _validate.check_type(arrow.field(f.name).type, f.type, cast, f.name)
        except _validate._Mismatch as m:
            raise _validate.fail(m.reason, m.message, column=m.path) from None


def _check_required(src: DataFrame, fields: list[pa.Field]) -> None:
    """ValidationError when a required merged column has a null (nested
    required fields are checked on the executors, per base)."""
    from pyspark.sql import functions as F

    for f in fields:
        if not f.nullable and src.filter(F.col(f.name).isNull()).limit(1).count():
            raise _validate.fail(_validate.REQUIRED_NULL, f"required field {f.name} has nulls", column=f.name)


def _check_source_keys(src: DataFrame, key: str) -> None:
    """MergeKeyError for null or duplicate keys in the source."""
    from pyspark.sql import functions as F

    if src.filter(F.col(key).isNull()).limit(1).count():
        raise MergeKeyError("the source has null keys", reason="null-key")
    dups = src.groupBy(key).count().filter(F.col("count") > 1).limit(20).collect()
    if dups:
        found = [r[0] for r in dups]
        raise MergeKeyError(f"{len(found)}+ source key(s) appear more than once, e.g. {found[:5]}", found,
                            reason="duplicate-key")


def _commit_entries(table: Table, snap: int, rows: list[Any], snapshot_properties: dict[str, str] | None) -> int:
    """Commit the executors' column files (rows of ``_ENTRY_SCHEMA``) in
    one request pinned to ``snap``; their files are deleted when an
    executor reported a ValidationError (raised here) or the catalog
    refuses the commit."""
    entries = [json.loads(r.entry) for r in rows if r.entry]
    errors = [json.loads(r.error) for r in rows if r.error]
    if errors:
        _delete(table, entries)
        e = errors[0]
        raise ValidationError(e["message"], status=None, reason=e.get("reason"), details=e.get("details"))
    bases = [e["data-file"] for e in entries]
    if len(set(bases)) != len(bases):
        raise LakeholdError("two column files were written for one base file: a Spark task ran twice and "
                            "both outputs were kept")
    if not entries:
        return snap
    req: dict[str, Any] = {"column-files": entries, "requirements": [
        {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": snap}]}
    if snapshot_properties:
        req["snapshot-properties"] = snapshot_properties
    try:
        res = _commit.post(table._rest, f"{table._path}/column-files", req)
    except CommitStateUnknownError:
        raise
    except BaseException:
        _delete(table, entries)
        raise
    table._apply(res)
    return int(table.current_snapshot_id or 0)


def _delete(table: Table, entries: list[dict[str, Any]]) -> None:
    for e in entries:
        try:
            table._io.delete(e["location"])
        except OSError:
            pass  # an orphan for the clean-up
