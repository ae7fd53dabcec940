"""Scans of a v4 table: plan on the catalog, stitch and filter here.

A scan asks the catalog for a plan (``POST .../plan`` with
``X-Iceberg-Column-Files: true``), reads every task with ``_stitch``
(column files, deletion vectors, equality deletes, row lineage) on a small
thread pool, and applies the row filter to the stitched rows: planning is
inclusive, so a returned file may hold rows that do not match.
``Table.scan`` and ``Table.changes`` build these; nothing is read until a
``to_*`` method runs.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from lakehold import _expr, _schema
from lakehold._changes import read_changed_rows, unchanged_columns
from lakehold._scantasks import ScanTask
from lakehold._stitch import LAST_UPDATED, ROW_ID, NotChangedError, name_mapping, output_schema, read_task

if TYPE_CHECKING:
    import duckdb
    import pandas
    import polars

    from lakehold.table import Table

__all__ = ["NotChangedError", "Scan"]


def _workers() -> int:
    return min(8, (os.cpu_count() or 1) * 2)


class Scan:
    """A lazy read of a table (or of what changed in a snapshot range).

    Build it with ``Table.scan(...)`` or ``Table.changes(...)``. Every
    ``to_*`` method plans again, so a Scan can be read more than once.
    """

    def __init__(self, table: Table, row_filter: Any = None, selected_fields: Sequence[str] = ("*",),
                 snapshot_id: int | None = None, with_row_lineage: bool = False, limit: int | None = None,
                 *, since_snapshot_id: int | None = None, to_snapshot_id: int | None = None) -> None:
        """Raises FilterError for a row filter that does not convert, and
        StitchError for a selected column not in the schema."""
        self._table = table
        self._snapshot_id = snapshot_id
        self._since = since_snapshot_id
        self._to = to_snapshot_id
        self._schema = self._read_schema()
        self._filter = _expr.to_json(row_filter, self._schema)
        self._lineage = with_row_lineage or since_snapshot_id is not None
        self._limit = limit
        self._columns = self._resolve(selected_fields)
        needed = _expr.referenced_names(self._filter, self._schema)
        self._read_columns = self._columns + [n for n in needed if n not in self._columns]
        self._predicate = _expr.to_pyarrow(self._filter, self._schema)
        self._out = output_schema(self._schema, self._columns, self._lineage)

    @classmethod
    def changes(cls, table: Table, since_snapshot_id: int, to_snapshot_id: int | None = None,
                selected_fields: Sequence[str] = ("*",)) -> Scan:
        """What changed after ``since_snapshot_id`` up to ``to_snapshot_id``
        (default: the current snapshot): every row of the files appended in
        the range, and the rows of updated base files whose
        ``_last_updated_sequence_number`` is past the start snapshot's. Rows
        carry ``_row_id`` and ``_last_updated_sequence_number`` and the
        ``selected_fields`` (default: every column) as of the end snapshot;
        a column that did not change is read from the end snapshot, so
        selecting columns never drops a changed row."""
        return cls(table, selected_fields=selected_fields, since_snapshot_id=since_snapshot_id,
                   to_snapshot_id=to_snapshot_id)

    def _read_schema(self) -> pa.Schema:
        """The schema rows are read with: the snapshot's for time travel,
        the current one otherwise."""
        if self._snapshot_id is None or self._since is not None:
            return self._table.schema()
        sid = self._table.snapshot(self._snapshot_id).get("schema-id")
        return _schema.to_arrow_schema(self._table.schema_json(sid))

    def _resolve(self, selected: Sequence[str]) -> list[str]:
        """The selected table columns; naming a row-lineage column asks for
        both (they come last)."""
        if isinstance(selected, str):
            selected = (selected,)
        if any(n in (ROW_ID, LAST_UPDATED) for n in selected):
            self._lineage = True
            selected = tuple(n for n in selected if n not in (ROW_ID, LAST_UPDATED))
        if "*" in selected:
            return list(self._schema.names)
        output_schema(self._schema, list(selected), False)  # raises for unknown names
        return list(selected)

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the rows this scan returns."""
        return self._out

    def plan_body(self) -> dict[str, Any]:
        """The ``/plan`` request body of this scan."""
        body: dict[str, Any] = {"case-sensitive": True}
        # A change plan selects nothing: the catalog returns a changed base
        # only when a selected column changed, and every changed row counts.
        if self._since is None and self._read_columns != list(self._schema.names):
            body["select"] = self._read_columns
        if self._filter is not None and self._filter is not True:
            body["filter"] = self._filter
        if self._since is not None:
            body["start-snapshot-id"] = self._since
            body["end-snapshot-id"] = self._to if self._to is not None else self._table.current_snapshot_id
        elif self._snapshot_id is not None:
            body["snapshot-id"] = self._snapshot_id
            body["use-snapshot-schema"] = True
        return body

    def plan_files(self) -> list[ScanTask]:
        """The file-scan tasks of this scan (delete files resolved), typed
        as ``lakehold._scantasks.ScanTask``.

        Raises the catalog's errors (NoSuchTableError, ValidationError, ...).
        """
        if self._since is None and self._snapshot_id is None and self._table.current_snapshot_id is None:
            return []
        return self._table._plan(self.plan_body())

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        """Yield the rows as record batches, task by task, in plan order.

        At most a few tasks are in memory at once: reads run ahead on a
        bounded thread pool. Raises StitchError, DeletesError, OSError or
        the catalog's errors.
        """
        tasks = self.plan_files()
        remaining = self._limit
        for table in self._tables(tasks, self._read_columns, self._out.names, self._end_tasks(tasks, self._read_columns)):
            if remaining is not None:
                table = table.slice(0, remaining)
                remaining -= table.num_rows
            yield from table.to_batches()
            if remaining is not None and remaining <= 0:
                return

    def _end_tasks(self, tasks: list[ScanTask], columns: list[str]) -> dict[str, ScanTask]:
        """For a change scan whose changed bases lack some of ``columns``:
        the end snapshot's task of each base file, by path (one more plan)."""
        if self._since is None or not any(unchanged_columns(t, columns, self._schema) for t in tasks):
            return {}
        end = self._to if self._to is not None else self._table.current_snapshot_id
        plan = self._table._plan({"case-sensitive": True, "snapshot-id": end, "select": columns})
        return {t["data-file"]["file-path"]: t for t in plan}

    def _tables(self, tasks: list[ScanTask], columns: list[str], out: list[str],
                end: dict[str, ScanTask]) -> Iterator[pa.Table]:
        """Each task's rows of ``out`` (read: ``columns``), in plan order,
        read ahead on the pool by at most twice its size."""
        workers = _workers()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            pending: deque[Future[pa.Table]] = deque()
            it = iter(tasks)
            try:
                for task in it:
                    pending.append(pool.submit(self._read, task, columns, out, end))
                    if len(pending) >= workers * 2:
                        yield pending.popleft().result()
                while pending:
                    yield pending.popleft().result()
            finally:
                for f in pending:
                    f.cancel()

    def _read(self, task: ScanTask, columns: list[str], out: list[str],
              end: dict[str, ScanTask] | None = None) -> pa.Table:
        """One task's matching rows: read ``columns`` (and lineage when
        asked), filter, keep ``out``. A change task gives its changed rows,
        the columns it lacks read from ``end`` (the end snapshot's tasks by
        path; a plain scan, e.g. lakehold.spark.read's, passes none)."""
        mapping = name_mapping(self._table.metadata)
        df = task["data-file"]
        if self._since is not None and df.get("column-files-changed-since") is not None:
            table = read_changed_rows(self._table._io, task, (end or {}).get(df["file-path"]), columns,
                                      self._start_sequence_number(), schema=self._schema, name_mapping=mapping)
        else:
            table = read_task(self._table._io, task, columns, self._lineage, schema=self._schema,
                              name_mapping=mapping)
        if self._predicate is not None:
            table = table.filter(self._predicate)
        return table if table.column_names == out else table.select(out)

    def _start_sequence_number(self) -> int:
        """The change range's start sequence number; LakeholdError when the
        start snapshot is not in the table's metadata."""
        assert self._since is not None
        return int(self._table.snapshot(self._since).get("sequence-number", 0))

    def to_arrow_batch_reader(self) -> pa.RecordBatchReader:
        """A RecordBatchReader over ``to_batches()`` (nothing materialized);
        it raises what ``to_batches`` raises, when read."""
        return pa.RecordBatchReader.from_batches(self._out, self.to_batches())

    def to_arrow(self) -> pa.Table:
        """All matching rows as one pyarrow Table; raises what ``to_batches`` raises."""
        return pa.Table.from_batches(list(self.to_batches()), schema=self._out)

    def to_pandas(self, **kwargs: Any) -> pandas.DataFrame:
        """The rows as a pandas DataFrame (``kwargs`` go to
        ``pyarrow.Table.to_pandas``); raises what ``to_batches`` raises."""
        return self.to_arrow().to_pandas(**kwargs)

    def to_polars(self) -> polars.DataFrame:
        """The rows as a Polars DataFrame; ImportError without polars, else
        what ``to_batches`` raises."""
        import polars as pl

        frame = pl.from_arrow(self.to_arrow())
        assert isinstance(frame, pl.DataFrame)
        return frame

    def to_duckdb(self, table_name: str, connection: duckdb.DuckDBPyConnection | None = None) -> duckdb.DuckDBPyConnection:
        """Register the rows as view ``table_name`` in a DuckDB connection
        (a new in-memory one when none is given) and return the connection.
        The rows are materialized, so the view can be queried many times.
        ImportError without duckdb, else what ``to_batches`` raises.
        """
        import duckdb

        con = connection if connection is not None else duckdb.connect()
        con.register(table_name, self.to_arrow())
        return con

    def count(self) -> int:
        """The number of matching rows. Without a filter or equality
        deletes it is taken from the plan (record counts less deletion
        vector cardinalities) without reading data; otherwise only the
        columns the filter needs are read. Raises what ``to_batches`` raises."""
        tasks = self.plan_files()
        if self._predicate is None and self._since is None and all(_countable(t) for t in tasks):
            total = sum(_live_rows(t) for t in tasks)
            return total if self._limit is None else min(total, self._limit)
        needed = _expr.referenced_names(self._filter, self._schema)
        rows = sum(t.num_rows for t in self._tables(tasks, needed, [], self._end_tasks(tasks, needed)))
        return rows if self._limit is None else min(rows, self._limit)


def _countable(task: ScanTask) -> bool:
    return all(d.get("content") == "position-deletes" and d.get("content-offset") is not None
               for d in task.get("delete-files", []))


def _live_rows(task: ScanTask) -> int:
    dv = sum(int(d.get("record-count", 0)) for d in task.get("delete-files", []))
    return int(task["data-file"]["record-count"]) - dv
