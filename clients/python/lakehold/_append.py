"""Appends: Arrow rows to Parquet data files, committed in one ``/files`` request."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _commit, _partition, _schema, _validate, _write
from .errors import CommitStateUnknownError

if TYPE_CHECKING:
    from .table import Table

# Rows per data file: bounds the memory of a write and keeps files a
# reader can take in parallel.
MAX_ROWS_PER_FILE = 1_000_000


def append(table: Table, data: Any, snapshot_properties: dict[str, str] | None, cast: _validate.CastMode) -> int:
    """See :meth:`Table.append`."""
    src = _validate.to_arrow(data, "append data")
    table.refresh()  # the current schema and spec, and fresh vended credentials
    rows = _validate.conform(src, list(table.schema()), cast, what="append data", fill_missing=True)
    if rows.num_rows == 0:
        raise _validate.fail(_validate.NO_ROWS, "append needs at least one row")
    spec = table.spec_json()
    names = {int(_schema.field_id(f) or 0): f.name for f in table.schema()}
    entries: list[dict[str, Any]] = []
    try:
        for partition, subdir, part in _partition.split(rows, spec, names):
            for start in range(0, part.num_rows, MAX_ROWS_PER_FILE):
                chunk = part.slice(start, MAX_ROWS_PER_FILE)
                loc = _write.new_location(table.location, subdir)
                entries.append({"location": loc})
                size = _write.write(table._io, loc, chunk)
                entries[-1] = _write.data_file_entry(loc, chunk, size, int(spec.get("spec-id", 0)), partition)
        body: dict[str, Any] = {"add-data-files": entries}
        if snapshot_properties:
            body["snapshot-properties"] = dict(snapshot_properties)
        table._apply(_commit.post(table._rest, f"{table._path}/files", body))
    except CommitStateUnknownError:
        raise  # the files may be referenced now: keep them
    except BaseException:
        for e in entries:
            try:
                table._io.delete(e["location"])
            except OSError:
                pass
        raise
    return int(table.current_snapshot_id or 0)
