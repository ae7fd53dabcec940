"""Table: metadata, planning and the write paths of one v4 table."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

import pyarrow as pa

from . import _scantasks, _schema
from ._scantasks import ScanTask
from ._io import FileIO
from ._rest import RestSession
from .errors import LakeholdError

if TYPE_CHECKING:
    from .scan import Scan


class Table:
    """A loaded table. Metadata is as of the last load, commit or
    :meth:`refresh`; writes refresh it themselves. Methods raise the
    :mod:`lakehold.errors` class of the catalog's answer."""

    def __init__(self, identifier: tuple[str, ...], load_result: dict[str, Any], rest: RestSession) -> None:
        self.identifier = identifier
        self._rest = rest
        self._apply(load_result)

    def _apply(self, res: dict[str, Any]) -> None:
        """Take a LoadTableResult (or CommitTableResponse: no config, keep
        the vended credentials we have)."""
        self.metadata: dict[str, Any] = res["metadata"]
        self.metadata_location: str | None = res.get("metadata-location")
        if res.get("config") or res.get("storage-credentials") or not hasattr(self, "_io"):
            props = {**self._rest.properties, **(res.get("config") or {})}
            self._io = FileIO(props, res.get("storage-credentials"), self.location)

    def _worker_state(self) -> dict[str, Any]:
        """What another process needs to read and write this table's files
        (lakehold.spark's executors): the metadata and the storage access
        the catalog vended, not the catalog session (its credential or token
        stays here)."""
        from ._io import storage_properties
        return {"identifier": list(self.identifier), "metadata": self.metadata,
                "io": [storage_properties(self._io.properties), self._io.storage_credentials, self.location]}

    @classmethod
    def _for_worker(cls, state: dict[str, Any]) -> Table:
        """A table rebuilt from ``_worker_state`` in a worker: it reads and
        writes files; it cannot plan or commit (no catalog session)."""
        t = cls.__new__(cls)
        t.identifier = tuple(state["identifier"])
        t.metadata = state["metadata"]
        t.metadata_location = None
        props, creds, location = state["io"]
        t._io = FileIO(props, creds, location)
        return t

    # --- paths ----------------------------------------------------------------

    @property
    def _path(self) -> str:
        from .catalog import namespace_path
        return f"namespaces/{namespace_path(self.identifier[:-1])}/tables/{quote(self.identifier[-1], safe='')}"

    # --- metadata -------------------------------------------------------------

    @property
    def location(self) -> str:
        """The table's base location."""
        return str(self.metadata["location"]).rstrip("/")

    @property
    def format_version(self) -> int:
        """The table's format version."""
        return int(self.metadata.get("format-version", 1))

    def schema_json(self, schema_id: int | None = None) -> dict[str, Any]:
        """The Iceberg schema JSON (current, or ``schema_id``); LakeholdError when unknown."""
        sid = self.metadata.get("current-schema-id", 0) if schema_id is None else schema_id
        for s in self.metadata.get("schemas", []):
            if s.get("schema-id") == sid:
                return s
        raise LakeholdError(f"schema {sid} is not in the table metadata")

    def schema(self) -> pa.Schema:
        """The current schema as Arrow, field ids as ``PARQUET:field_id``."""
        return _schema.to_arrow_schema(self.schema_json())

    def _schema_of_snapshot(self, snapshot_id: int | None) -> pa.Schema:
        """The Arrow schema rows of ``snapshot_id`` are read with (its
        ``schema-id``; the current schema for None or a snapshot without one)."""
        if snapshot_id is None:
            return self.schema()
        sid = self.snapshot(snapshot_id).get("schema-id")
        return _schema.to_arrow_schema(self.schema_json(sid))

    def spec_json(self) -> dict[str, Any]:
        """The default partition spec JSON."""
        sid = self.metadata.get("default-spec-id", 0)
        for s in self.metadata.get("partition-specs", []):
            if s.get("spec-id") == sid:
                return s
        return {"spec-id": sid, "fields": []}

    @property
    def current_snapshot_id(self) -> int | None:
        """The current snapshot id, None for an empty table."""
        sid = self.metadata.get("current-snapshot-id")
        return None if sid is None or sid == -1 else int(sid)

    def snapshots(self) -> list[dict[str, Any]]:
        """The snapshots in the metadata, oldest first."""
        return list(self.metadata.get("snapshots") or [])

    def snapshot(self, snapshot_id: int) -> dict[str, Any]:
        """The snapshot ``snapshot_id``; LakeholdError when unknown."""
        for s in self.snapshots():
            if s["snapshot-id"] == snapshot_id:
                return s
        raise LakeholdError(f"snapshot {snapshot_id} is not in the table metadata")

    def refresh(self) -> Table:
        """Reload metadata and vended credentials; returns self."""
        self._apply(self._rest.request("GET", self._path))
        return self

    def export(self, identifier: str | tuple[str, ...], *, format_version: int = 3, compact: bool = False,
               fold_source: bool = False) -> Table:
        """Copy this v4 table's current snapshot into a new table of format
        ``format_version`` (1, 2 or 3) named ``identifier``, which every
        engine reads, and return it. The catalog copies the live files into
        the new table's location and keeps each file's sequence numbers and,
        in format 3, its ``first_row_id`` (so rows keep ``_row_id``).

        Data files with column files are refused (ValidationError, reason
        ``column-files-pending``) unless ``compact`` is true: each such base
        (and, below format 3, each with a deletion vector) is then folded
        straight into the new table, written once; this table is not
        changed. With ``fold_source`` too, they are folded in compaction
        commits of this table first (write-data needed), then copied.
        A fold that cannot keep the rows raises its ValidationError
        (``required-field-nulls``, ...). AlreadyExistsError when
        ``identifier`` is taken."""
        from . import _commit
        from .catalog import split_identifier
        ns, name = split_identifier(identifier)
        body: dict[str, Any] = {"destination": {"namespace": list(ns), "name": name},
                                "format-version": format_version, "compact": compact}
        if fold_source:
            body["fold-source"] = True
        res = _commit.post(self._rest, f"{self._path}/export", body)
        if compact and fold_source:
            self.refresh()  # the folds moved this table on
        return Table((*ns, name), res, self._rest)

    # --- planning (used by scan.py) -------------------------------------------

    def _plan(self, body: dict[str, Any]) -> list[ScanTask]:
        """Plan on the server and return every file-scan task, following
        ``plan-tasks`` through ``/tasks``; each task's ``delete-files`` holds
        the delete-file objects it references (``_scantasks.resolve``).
        LakeholdError for a failed plan or an answer of another shape.
        Unless ``body`` names ``stats-fields``, it asks for none: this reader
        never uses column counts, and the catalog then reads less of each
        manifest."""
        body = {"stats-fields": [], **body}
        res = self._rest.request("POST", f"{self._path}/plan", json=body)
        if res.get("status") not in (None, "completed"):
            raise LakeholdError(f"scan planning answered status {res.get('status')!r}")
        tasks = _scantasks.resolve(res)
        pending = list(res.get("plan-tasks") or [])
        while pending:
            sub = self._rest.request("POST", f"{self._path}/tasks", json={"plan-task": pending.pop(0)})
            tasks.extend(_scantasks.resolve(sub))
            pending.extend(sub.get("plan-tasks") or [])
        return tasks

    # --- writes ---------------------------------------------------------------

    def append(self, data: Any, snapshot_properties: dict[str, str] | None = None, *,
               cast: Literal["exact", "safe"] = "exact") -> int:
        """Append rows (a pyarrow Table, RecordBatch or RecordBatchReader, or a
        pandas/polars DataFrame): Parquet files with field ids under
        ``{location}/data/``, split by the partition spec, committed with
        their content stats in one ``/files`` request. Returns the new
        snapshot id.

        Before a file is written the data is checked against the table's
        schema (README, "Checks before writing"): ValidationError (status
        None, ``reason`` e.g. ``undeclared-column``, ``type-mismatch``,
        ``null-in-required-field``, ``missing-column``, ``no-rows``) when a
        column is not in the table, its Arrow type is not the field's, or a
        required field has nulls; an optional column left out is written as
        nulls. ``cast="safe"`` also accepts widening casts that lose
        nothing (int32 to long, float32 to double, ...). The catalog's
        errors otherwise (files are removed when it refuses)."""
        from . import _append, _validate

        return _append.append(self, data, snapshot_properties, _validate.cast_mode(cast))

    def update_columns(self, fn: Callable[[pa.Table], Any], inputs: list[str], outputs: list[str] | pa.Schema,
                       row_filter: Any = None, snapshot_properties: dict[str, str] | None = None, *,
                       cast: Literal["exact", "safe"] = "exact", checkpoint: str | os.PathLike[str] | None = None
                       ) -> int:
        """Compute columns ``outputs`` with ``fn`` for every base data file.

        ``fn`` gets every row of one base (deleted rows included, in file
        order) with the current values of ``inputs`` and returns a table
        (Arrow, pandas or polars) with exactly the ``outputs`` columns and
        as many rows. With ``outputs`` as a pa.Schema, columns the table
        lacks are added to its schema first. With ``row_filter`` (expression
        JSON or PyIceberg string) only matching rows change; the others keep
        their values. One row-aligned column file per base, one commit.
        Returns the new snapshot id.

        Each base's result is checked before its column file is written
        (README, "Checks before writing"): ValidationError for an output
        not in the table (``unknown-column``), a column ``fn`` returned
        that is not an output (``undeclared-column``) or left out
        (``missing-column``), a type that is not the field's
        (``type-mismatch``; ``cast="safe"`` allows lossless widening),
        nulls in a required field among the rows written
        (``null-in-required-field``) or a wrong row count
        (``row-count-mismatch``); the files written for other bases are
        deleted (kept and recorded with ``checkpoint``) and nothing is
        committed. What ``fn`` itself raises
        propagates unchanged. CommitFailedError after repeated conflicts,
        the catalog's errors.

        The catalog is asked before each base whether it answers: when it
        does not (TransportError, ServiceUnavailableError) no further base
        is started and the error says how far the update got. With
        ``checkpoint`` (a local file path) every finished base is recorded
        there and its file kept when the update stops, for any reason; run
        the same update with the same path to build only the bases not
        recorded (or changed since) and commit once; the file is removed
        after the commit (README, "Resumable updates"). ValidationError
        ``checkpoint-mismatch`` when the file is another update's."""
        from . import _colupdate, _validate

        mode = _validate.cast_mode(cast)
        fields = self._output_fields(outputs, mode)
        return _colupdate.run(self, _colupdate.map_job(self, fn, list(inputs), fields, row_filter,
                                                       snapshot_properties, mode), checkpoint=checkpoint)

    def merge_columns(self, source: Any, key: str, columns: list[str] | None = None,
                      snapshot_properties: dict[str, str] | None = None, *,
                      cast: Literal["exact", "safe"] = "exact", checkpoint: str | os.PathLike[str] | None = None
                      ) -> int:
        """Set ``columns`` (default: every source column but ``key``) of the
        rows whose ``key`` matches a source row; other rows keep their
        values. Only bases holding a matched row get a column file; one
        commit. ``source`` is an Arrow table or a pandas/polars DataFrame;
        with ``columns`` given, its other columns are not read.

        The whole source is checked before a file is written (README,
        "Checks before writing"): ValidationError for a column not in the
        table (``unknown-column``) or not in the source
        (``missing-column``), a value or key type that is not the field's
        (``type-mismatch``, ``key-type-mismatch``: float keys for a
        ``long`` key are refused even when integral; ``cast="safe"`` allows
        lossless widening such as int32 keys), or nulls in a required
        field; MergeKeyError (a ValidationError) for null or duplicate
        source keys or keys no live row has. Nothing is written or
        committed then. CommitFailedError after repeated conflicts.
        ``checkpoint`` as for :meth:`update_columns` (a checkpoint taken
        with another source is refused)."""
        from . import _colupdate, _validate

        mode = _validate.cast_mode(cast)
        src = _validate.to_arrow(source, "merge_columns source")
        cols = list(columns) if columns is not None else [c for c in src.column_names if c != key]
        if not cols:
            raise _validate.fail(_validate.NO_COLUMNS, "merge_columns needs at least one column besides the key")
        absent = [c for c in cols if c not in src.column_names]
        if absent:
            raise _validate.fail(_validate.MISSING_COLUMN, f"columns {absent} are not in the source",
                                 column=absent[0])
        self.refresh()
        self._output_fields(cols, mode)
        return _colupdate.run(self, _colupdate.merge_job(self, src, key, cols, snapshot_properties, mode),
                              fresh=True, checkpoint=checkpoint)

    def _output_fields(self, outputs: list[str] | pa.Schema,
                       cast: Literal["exact", "safe"] = "exact") -> list[pa.Field]:
        """Table fields for ``outputs``, adding a pa.Schema's new columns to
        the table schema. ValidationError for unknown names
        (``unknown-column``), a name given twice, or a pa.Schema field whose
        type does not fit the table's field of that name (checked before
        any column is added)."""
        from . import _validate

        names = list(outputs.names) if isinstance(outputs, pa.Schema) else list(outputs)
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise _validate.fail(_validate.DUPLICATE_COLUMN, f"output column {dup[0]!r} is named twice",
                                 column=dup[0])
        if isinstance(outputs, pa.Schema):
            current = self.schema()
            for f in outputs:
                # A new column's declared type must be what Iceberg stores
                # (int16 becomes int32, ...), or fn's results would not fit.
                want = current.field(f.name) if f.name in current.names else _schema.to_arrow_field(
                    _schema.from_arrow_schema(pa.schema([f]))["fields"][0])
                try:
                    _validate.check_type(f.type, want.type, cast, f.name)
                except _validate._Mismatch as m:
                    raise _validate.fail(m.reason, f"outputs schema: {m.message}", column=m.path) from None
            new = [f for f in outputs if f.name not in current.names]
            if new:
                self._add_columns(new)
        schema = self.schema()
        unknown = [n for n in names if n not in schema.names]
        if unknown:
            raise _validate.fail(_validate.UNKNOWN_COLUMN, f"columns {unknown} are not in the table "
                                 "(pass outputs as a pa.Schema to add them)", column=unknown[0])
        return [schema.field(n) for n in names]

    def _add_columns(self, fields: list[pa.Field]) -> None:
        """Add nullable top-level columns in one schema commit."""
        cur = self.schema_json()
        last = int(self.metadata.get("last-column-id", _schema.max_field_id(cur)))
        added = _schema.from_arrow_schema(pa.schema([f.with_nullable(True) for f in fields]), first_id=last)
        for f in added["fields"]:
            f["required"] = False
        sid = max(s.get("schema-id", 0) for s in self.metadata.get("schemas", [])) + 1
        new_schema = {**cur, "schema-id": sid, "fields": [*cur["fields"], *added["fields"]]}
        body = {"requirements": [{"type": "assert-current-schema-id", "current-schema-id": cur.get("schema-id", 0)}],
                "updates": [{"action": "add-schema", "schema": new_schema,
                             "last-column-id": max(last, _schema.max_field_id(new_schema))},
                            {"action": "set-current-schema", "schema-id": -1}]}
        from . import _commit

        self._apply(_commit.post(self._rest, self._path, body))

    # --- reads (scan.py) ------------------------------------------------------

    def scan(self, row_filter: Any = None, selected_fields: tuple[str, ...] = ("*",), snapshot_id: int | None = None,
             with_row_lineage: bool = False, limit: int | None = None) -> Scan:
        """A scan of the table (see :class:`lakehold.Scan`)."""
        from .scan import Scan
        return Scan(self, row_filter=row_filter, selected_fields=selected_fields, snapshot_id=snapshot_id,
                    with_row_lineage=with_row_lineage, limit=limit)

    def changes(self, since_snapshot_id: int, to_snapshot_id: int | None = None,
                selected_fields: tuple[str, ...] = ("*",)) -> Scan:
        """The rows added or changed after ``since_snapshot_id`` up to
        ``to_snapshot_id`` (default: current), each with ``_row_id`` and
        ``_last_updated_sequence_number`` and the ``selected_fields``
        (default: every column) as of ``to_snapshot_id``. Selecting fields
        only projects: every changed row comes back. See ``Scan.changes``."""
        from .scan import Scan
        return Scan(self, selected_fields=selected_fields, since_snapshot_id=since_snapshot_id,
                    to_snapshot_id=to_snapshot_id)


__all__ = ["Table"]
