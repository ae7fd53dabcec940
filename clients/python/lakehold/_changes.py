"""Rows of one change task (``column-files-changed-since``) with any columns.

A change task lists only the column files added in the range, so it can
give the changed columns and the row lineage, not the others: their current
values may sit in column files from before the range (docs/column-files.md,
"Change detection"). The rows that changed are picked from the change task
(``_last_updated_sequence_number`` past the start); every other selected
column is read, as of the end snapshot, from the same base's regular task
and joined by ``_row_id``. So a change scan returns whole rows, and
selecting a column never drops a changed row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from lakehold._scantasks import ScanTask
from lakehold._stitch import LAST_UPDATED, ROW_ID, _LINEAGE, field_id, read_task
from lakehold.errors import StitchError


def changed_field_ids(task: ScanTask) -> set[int]:
    """The table fields the change task's column files carry."""
    out: set[int] = set()
    for cf in task["data-file"].get("column-files") or []:
        out.update(int(f) for f in cf.get("field-ids", []) if int(f) not in _LINEAGE)
    return out


def unchanged_columns(task: ScanTask, columns: Sequence[str], schema: pa.Schema) -> list[str]:
    """The ``columns`` a change task cannot give (none for other tasks)."""
    if task["data-file"].get("column-files-changed-since") is None:
        return []
    changed = changed_field_ids(task)
    return [c for c in columns if field_id(schema.field(c)) not in changed]


def read_changed_rows(io: Any, task: ScanTask, end_task: ScanTask | None, columns: Sequence[str],
                      start_seq: int, *, schema: pa.Schema, name_mapping: list[dict[str, Any]] | None) -> pa.Table:
    """The changed rows of a change task: ``columns`` then the two lineage
    columns. ``end_task`` is the base's task in a plan of the end snapshot,
    needed when a column did not change. Raises StitchError when it is
    missing or does not hold a changed row, else what ``read_task`` raises."""
    missing = unchanged_columns(task, columns, schema)
    have = [c for c in columns if c not in missing]
    part = read_task(io, task, have, True, schema=schema, name_mapping=name_mapping)
    part = part.filter(pc.greater(part.column(LAST_UPDATED), start_seq))
    if not missing:
        return part
    if end_task is None:
        raise StitchError(f"{task['data-file']['file-path']} changed but is not in the end snapshot's plan")
    full = read_task(io, end_task, missing, True, schema=schema, name_mapping=name_mapping)
    idx = pc.index_in(part.column(ROW_ID), value_set=full.column(ROW_ID))
    if idx.null_count:
        raise StitchError(f"{task['data-file']['file-path']}: a changed row is not live in the end snapshot")
    arrays = [part.column(c) if c in have else full.column(c).take(idx) for c in columns]
    arrays += [part.column(ROW_ID), part.column(LAST_UPDATED)]
    fields = [(part if c in have else full).schema.field(c) for c in columns]
    fields += [part.schema.field(ROW_ID), part.schema.field(LAST_UPDATED)]
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))
