"""The tasks of a scan plan answer, typed as the catalog's OpenAPI spec types
them (``openapi/scantasks/scantasks.json``): the REST FileScanTask, DataFile
and DeleteFile fields with the v4 extensions of docs/column-files.md
(``column-files`` with ``field-ids`` and ``sequence-number``,
``first-row-id``, ``data-sequence-number``,
``latest-column-file-snapshot-id``, ``column-files-changed-since``).

The wire types below mirror the spec's schemas key for key, with their
required-ness and types; ``tests/test_plan_schema.py`` compares them with the
JSON file, so a change to the spec without this module fails a test. They
are TypedDicts: at run time a task is the decoded JSON dict the rest of the
library reads, and ``resolve`` checks the keys the schemas require.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from .errors import LakeholdError

CountMap = TypedDict("CountMap", {
    "keys": list[int],
    "values": list[int],
})

PlanColumnFile = TypedDict("PlanColumnFile", {
    "location": str,
    "file-format": str,
    "field-ids": list[int],
    "file-size-in-bytes": int,
    # On change tasks only: the data sequence number of the commit that
    # added the column file.
    "sequence-number": NotRequired[int],
})

PlanDataFile = TypedDict("PlanDataFile", {
    "content": str,
    "file-path": str,
    "file-format": str,
    "spec-id": int,
    "partition": list[Any],
    "file-size-in-bytes": int,
    "record-count": int,
    "split-offsets": NotRequired[list[int]],
    "sort-order-id": NotRequired[int],
    "first-row-id": NotRequired[int],
    "value-counts": NotRequired[CountMap],
    "null-value-counts": NotRequired[CountMap],
    "nan-value-counts": NotRequired[CountMap],
    "column-files": NotRequired[list[PlanColumnFile]],
    "data-sequence-number": NotRequired[int],
    "latest-column-file-snapshot-id": NotRequired[int],
    "column-files-changed-since": NotRequired[int],
})

PlanDeleteFile = TypedDict("PlanDeleteFile", {
    "content": str,
    "file-path": str,
    "file-format": str,
    "spec-id": int,
    "partition": list[Any],
    "file-size-in-bytes": int,
    "record-count": int,
    "equality-ids": NotRequired[list[int]],
    "referenced-data-file": NotRequired[str],
    "content-offset": NotRequired[int],
    "content-size-in-bytes": NotRequired[int],
})

FileScanTask = TypedDict("FileScanTask", {
    "data-file": PlanDataFile,
    "delete-file-references": NotRequired[list[int]],
    "residual-filter": Any,
})

# The schema of each wire type, by its name in scantasks.json (RawJSON, any
# JSON value, is Any here).
WIRE_TYPES: dict[str, Any] = {
    "FileScanTask": FileScanTask,
    "PlanDataFile": PlanDataFile,
    "PlanColumnFile": PlanColumnFile,
    "PlanDeleteFile": PlanDeleteFile,
    "CountMap": CountMap,
}

# A task as the library passes it on: the FileScanTask with its
# delete-file-references replaced by the delete files themselves.
ScanTask = TypedDict("ScanTask", {
    "data-file": PlanDataFile,
    "delete-files": list[PlanDeleteFile],
    "residual-filter": NotRequired[Any],
})


def resolve(res: dict[str, Any]) -> list[ScanTask]:
    """The tasks of one plan or fetch-tasks answer, each with the delete
    files it references in ``delete-files`` (its other keys kept).
    LakeholdError when a data, column or delete file lacks a key its schema
    requires, or a task lacks its data file or references a delete file the
    answer does not hold: the answer is not one this library can read. (The
    residual filter is not checked: the library does not read it.)"""
    deletes: list[PlanDeleteFile] = res.get("delete-files") or []
    for d in deletes:
        _require(d, PlanDeleteFile, "delete file")
    out: list[ScanTask] = []
    for task in res.get("file-scan-tasks") or []:
        if not isinstance(task, dict) or not isinstance(task.get("data-file"), dict):
            raise LakeholdError(f"scan planning answered a file scan task without a data file: {task!r}")
        df = task["data-file"]
        _require(df, PlanDataFile, "data file")
        for cf in df.get("column-files") or []:
            _require(cf, PlanColumnFile, f"column file of {df['file-path']}")
        refs = task.get("delete-file-references") or []
        if any(not 0 <= i < len(deletes) for i in refs):
            raise LakeholdError(f"scan planning answered a task for {df['file-path']} that references "
                                f"delete files {refs} of {len(deletes)}")
        resolved: Any = {k: v for k, v in task.items() if k != "delete-file-references"}
        resolved["delete-files"] = [deletes[i] for i in refs]
        out.append(resolved)
    return out


def _require(obj: Any, typ: Any, what: str) -> None:
    if not isinstance(obj, dict):
        raise LakeholdError(f"scan planning answered a {what} that is not an object: {obj!r}")
    missing = sorted(k for k in typ.__required_keys__ if k not in obj)
    if missing:
        raise LakeholdError(f"scan planning answered a {what} without {', '.join(missing)}")
