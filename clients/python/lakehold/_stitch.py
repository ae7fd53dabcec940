"""Stitch: read one planned data file with its column files as one Arrow table.

Follows docs/column-files.md ("Routes", "Row lineage", "Change detection")
and mirrors the Go reader in clients/go/stitch:

- each selected top-level field comes from the newest column file that
  lists its field id, else from the base file; Parquet columns are matched
  by ``PARQUET:field_id``, never by name, so renamed columns read, and a
  field an older base file lacks reads as nulls; a column written without
  a field id takes the one the table's name mapping
  (``schema.name-mapping.default``) gives its name path, as the Iceberg
  spec says (nested fields, a list's ``element``, a map's ``key`` and
  ``value``, any of a mapped field's ``names``), and a column with neither
  is ignored;
- column files are dense and row-aligned with the base, so columns are put
  side by side by position, then the deletion vector's positions (base
  positions) are dropped, then equality deletes are applied by anti-join;
- ``_row_id`` is the base's materialized value where not null (a compacted
  file stores it), else ``first-row-id`` + position;
  ``_last_updated_sequence_number`` follows the three rules of the docs.

All of it is vectorized: files are read with ``ParquetFile.read(columns=)``
and lineage and masks are built with numpy and pyarrow.compute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lakehold._deletes import DeletesError, anti_join, keep_mask, positions_from_file, read_dv
from lakehold._scantasks import PlanColumnFile, PlanDataFile, PlanDeleteFile, ScanTask
from lakehold.errors import (  # re-exported: the classes live in lakehold.errors
    MisalignedError as MisalignedError,
    NotChangedError as NotChangedError,
    StitchError as StitchError,
)

ROW_ID_FIELD_ID = 2147483540
LAST_UPDATED_FIELD_ID = 2147483539
ROW_ID = "_row_id"
LAST_UPDATED = "_last_updated_sequence_number"
_LINEAGE = (ROW_ID_FIELD_ID, LAST_UPDATED_FIELD_ID)
_FIELD_ID = b"PARQUET:field_id"
NAME_MAPPING_PROPERTY = "schema.name-mapping.default"




def lineage_fields() -> list[pa.Field]:
    """The Arrow fields of ``_row_id`` and ``_last_updated_sequence_number``."""
    return [_lineage_field(ROW_ID, ROW_ID_FIELD_ID), _lineage_field(LAST_UPDATED, LAST_UPDATED_FIELD_ID)]


def _lineage_field(name: str, fid: int) -> pa.Field:
    return pa.field(name, pa.int64(), nullable=True, metadata={_FIELD_ID: str(fid).encode()})


def field_id(field: pa.Field) -> int | None:
    """The ``PARQUET:field_id`` of an Arrow field, None when it has none."""
    raw = (field.metadata or {}).get(_FIELD_ID)
    return int(raw) if raw is not None else None


def name_mapping(metadata: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The parsed ``schema.name-mapping.default`` of table metadata, None
    when unset. Raises StitchError when it is not a name mapping."""
    import json

    raw = (metadata.get("properties") or {}).get(NAME_MAPPING_PROPERTY)
    if not raw:
        return None
    try:
        nm = json.loads(raw)
    except ValueError as exc:
        raise StitchError(f"the table's {NAME_MAPPING_PROPERTY} is not JSON: {exc}") from exc
    if not isinstance(nm, list) or not all(isinstance(m, dict) for m in nm):
        raise StitchError(f"the table's {NAME_MAPPING_PROPERTY} is not an Iceberg name mapping (a list of objects)")
    return nm


def apply_name_mapping(schema: pa.Schema, mapping: list[dict[str, Any]] | None) -> pa.Schema:
    """``schema`` (a Parquet file's Arrow schema) with the field id the name
    mapping gives every field that has none written, nested ones included;
    a field with a written id keeps it, one the mapping leaves out stays
    without. Names and types are unchanged (the file reads as before)."""
    if not mapping:
        return schema
    return pa.schema([_map_field(f, mapping, f.name) for f in schema], metadata=schema.metadata)


def _lookup(scope: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    for m in scope:
        if name in (m.get("names") or []):
            return m
    return None


def _map_field(f: pa.Field, scope: list[dict[str, Any]], name: str) -> pa.Field:
    m = _lookup(scope, name)
    md = dict(f.metadata or {})
    if _FIELD_ID not in md and m is not None and m.get("field-id") is not None:
        md[_FIELD_ID] = str(int(m["field-id"])).encode()
    typ = _map_type(f.type, (m or {}).get("fields") or [])
    return pa.field(f.name, typ, f.nullable, md or None)


def _map_type(t: pa.DataType, kids: list[dict[str, Any]]) -> pa.DataType:
    if pa.types.is_struct(t):
        return pa.struct([_map_field(t.field(i), kids, t.field(i).name) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(_map_field(t.key_field, kids, "key"), _map_field(t.item_field, kids, "value"),
                       keys_sorted=t.keys_sorted)
    if pa.types.is_large_list(t):
        return pa.large_list(_map_field(t.value_field, kids, "element"))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_map_field(t.value_field, kids, "element"), t.list_size)
    if pa.types.is_list(t):
        return pa.list_(_map_field(t.value_field, kids, "element"))
    return t


def output_schema(schema: pa.Schema, columns: Sequence[str | int], with_row_lineage: bool) -> pa.Schema:
    """The schema ``read_task`` returns for these arguments.

    Raises StitchError for a column not in ``schema``.
    """
    fields = [_target(schema, c) for c in columns]
    if with_row_lineage:
        fields += lineage_fields()
    return pa.schema(fields)


def _target(schema: pa.Schema, column: str | int) -> pa.Field:
    if isinstance(column, str):
        idx = schema.get_field_index(column)
        if idx < 0:
            raise StitchError(f"column {column!r} is not in the table")
        return schema.field(idx)
    for f in schema:
        if field_id(f) == column:
            return f
    raise StitchError(f"no top-level field has id {column}")


def read_task(io: Any, task: ScanTask, columns: Sequence[str | int], with_row_lineage: bool = False,
              keep_deleted_rows: bool = False, *, schema: pa.Schema,
              name_mapping: list[dict[str, Any]] | None = None) -> pa.Table:
    """Read the live rows of one file-scan task as ``output_schema(...)``.

    ``task`` is a REST file-scan task with ``delete-files`` resolved to
    objects; ``columns`` are top-level names or field ids of ``schema`` (the
    table's Arrow schema with field ids). With ``keep_deleted_rows`` no
    delete applies: the rows stay aligned with the base file (what a column
    writer needs). ``name_mapping`` is the table's parsed
    ``schema.name-mapping.default`` (``name_mapping(metadata)``): columns
    of the task's files without a field id are resolved through it. Raises StitchError (MisalignedError, NotChangedError)
    for a file that does not match the plan, DeletesError for a delete file
    that cannot be applied, and OSError when storage fails.
    """
    out_schema = output_schema(schema, columns, with_row_lineage)
    targets = [_target(schema, c) for c in columns]
    df = task["data-file"]
    eq_files = [] if keep_deleted_rows else [d for d in task.get("delete-files", []) if d.get("content") == "equality-deletes"]
    extra = _equality_targets(schema, eq_files, targets)
    reader = _TaskReader(io, df, name_mapping)
    ids = [_id(t) for t in targets + extra]
    cols = reader.read(ids, with_row_lineage)
    arrays = [_conform(cols.get(i), t, reader.rows) for i, t in zip(ids, targets + extra)]
    fields = targets + extra
    if with_row_lineage:
        arrays += [reader.row_ids(cols.get(ROW_ID_FIELD_ID)), reader.last_updated(cols.get(LAST_UPDATED_FIELD_ID))]
        fields += lineage_fields()
    table = _table(arrays, fields, reader.rows)
    if not keep_deleted_rows:
        table = _drop_deleted(io, task, df, table)
        for eq in eq_files:
            table = _apply_equality(io, eq, table, schema, name_mapping)
    return table.select([f.name for f in out_schema]) if extra else table


def _id(field: pa.Field) -> int:
    fid = field_id(field)
    if fid is None:
        raise StitchError(f"column {field.name!r} has no field id in the table schema")
    return fid


def _table(arrays: list[Any], fields: list[pa.Field], rows: int) -> pa.Table:
    if fields:
        return pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    # No column asked for (a count): a table of rows without columns.
    return pa.table({"_": pa.nulls(rows)}).drop_columns(["_"])


def _equality_targets(schema: pa.Schema, eq_files: list[PlanDeleteFile], targets: list[pa.Field]) -> list[pa.Field]:
    """Fields equality deletes compare that the caller did not select."""
    have = {field_id(t) for t in targets}
    extra: list[pa.Field] = []
    for eq in eq_files:
        for fid in eq.get("equality-ids") or []:
            if fid not in have:
                try:
                    extra.append(_target(schema, fid))
                except StitchError as exc:
                    raise DeletesError(f"equality delete on field {fid}, which is not a top-level column: "
                                       "this reader cannot apply it") from exc
                have.add(fid)
    return extra


class _TaskReader:
    """Reads one task's files: which file supplies each field, and the
    lineage values inherited from the entry."""

    def __init__(self, io: Any, df: PlanDataFile, mapping: list[dict[str, Any]] | None = None) -> None:
        self.io = io
        self.mapping = mapping
        self.base: str = df["file-path"]
        self.rows: int = int(df["record-count"])
        self.column_files: list[PlanColumnFile] = df.get("column-files") or []
        self.seq: int | None = df.get("data-sequence-number")
        self.first_row_id: int | None = df.get("first-row-id")
        self.updated = bool(self.column_files) or df.get("latest-column-file-snapshot-id") is not None
        self.changed_only = df.get("column-files-changed-since") is not None

    def sources(self, ids: list[int], lineage: bool) -> tuple[dict[int, str], set[int]]:
        """The file of every field, and the fields that may be missing from
        theirs (materialized lineage, fields an old base predates)."""
        src: dict[int, str] = {}
        optional: set[int] = set()
        for fid in ids:
            src[fid] = self.base
            optional.add(fid)
        if lineage:
            src[ROW_ID_FIELD_ID] = self.base
            optional.add(ROW_ID_FIELD_ID)
            if not self.updated:
                src[LAST_UPDATED_FIELD_ID] = self.base
                optional.add(LAST_UPDATED_FIELD_ID)
        for cf in self.column_files:
            for fid in cf.get("field-ids", []):
                if fid == ROW_ID_FIELD_ID or (fid not in src and not (lineage and fid == LAST_UPDATED_FIELD_ID)):
                    continue
                if fid == LAST_UPDATED_FIELD_ID and self._stale(cf):
                    continue
                src[fid] = cf["location"]
                optional.discard(fid)
        return src, optional

    def _stale(self, cf: PlanColumnFile) -> bool:
        # A lineage column written before the entry's last update predates it.
        cf_seq = cf.get("sequence-number")
        if not cf_seq or self.seq is None:
            return False
        return int(cf_seq) < self.seq

    def read(self, ids: list[int], lineage: bool) -> dict[int, pa.ChunkedArray]:
        """Read every field of ``ids`` (and the lineage columns) by file."""
        src, optional = self.sources(ids, lineage)
        if self.changed_only:
            for fid, loc in src.items():
                if loc == self.base and fid not in _LINEAGE:
                    raise NotChangedError(f"field {fid} did not change in the range of this change scan; "
                                          "select only changed columns, or scan the end snapshot for it")
        by_file: dict[str, list[int]] = {}
        for fid, loc in src.items():
            by_file.setdefault(loc, []).append(fid)
        out: dict[int, pa.ChunkedArray] = {}
        for loc, fids in by_file.items():
            out.update(self._read_file(loc, fids, optional))
        return out

    def _read_file(self, loc: str, fids: list[int], optional: set[int]) -> dict[int, pa.ChunkedArray]:
        with self.io.open_input(loc) as f:
            pf = pq.ParquetFile(f, pre_buffer=True)
            if pf.metadata.num_rows != self.rows:
                raise MisalignedError(f"{loc} has {pf.metadata.num_rows} rows, its base file {self.rows}")
            file_schema = apply_name_mapping(pf.schema_arrow, self.mapping)
            by_id = _columns_by_id(file_schema, loc)
            if not by_id and len(file_schema) and any(fid not in _LINEAGE for fid in fids):
                # Not a file that predates the fields: one written without
                # field ids. Reading it as nulls would lose its data.
                raise StitchError(f"{loc} has no column with a field id and the table's {NAME_MAPPING_PROPERTY} "
                                  "resolves none: set the table's name mapping to read it")
            names = [by_id[fid] for fid in fids if fid in by_id]
            for fid in fids:
                if fid not in by_id and fid not in optional:
                    raise StitchError(f"{loc} lists field {fid} but has no column with that field id")
            table = pf.read(columns=names, use_threads=True) if names else None
        if table is None:
            return {}
        return {fid: _with_ids(table.column(by_id[fid]), file_schema.field(by_id[fid]).type)
                for fid in fids if fid in by_id}

    def row_ids(self, mat: pa.ChunkedArray | None) -> pa.Array | pa.ChunkedArray:
        inherited = None
        if self.first_row_id is not None:
            inherited = pa.array(np.arange(self.first_row_id, self.first_row_id + self.rows, dtype=np.int64))
        return _coalesce(mat, inherited, self.rows)

    def last_updated(self, mat: pa.ChunkedArray | None) -> pa.Array | pa.ChunkedArray:
        inherited = None
        if self.seq is not None:
            inherited = pa.array(np.full(self.rows, self.seq, dtype=np.int64))
        return _coalesce(mat, inherited, self.rows)


def _columns_by_id(file_schema: pa.Schema, loc: str) -> dict[int, str]:
    """Top-level column name by field id (written or name-mapped); columns
    with no id are left out (ignored)."""
    by_id: dict[int, str] = {}
    for fld in file_schema:
        fid = field_id(fld)
        if fid is None:
            continue
        if fid in by_id:
            raise StitchError(f"{loc} has two columns for field id {fid} ({by_id[fid]!r}, {fld.name!r})")
        by_id[fid] = fld.name
    return by_id


def _with_ids(col: pa.ChunkedArray, typ: pa.DataType) -> pa.ChunkedArray:
    """A read column with the field ids of its name-mapped type on its
    nested fields (same layout: a zero-copy view), so that ``_conform``
    matches struct children by id."""
    if col.type == typ and _same_metadata(col.type, typ):
        return col
    return pa.chunked_array([c.view(typ) for c in col.chunks], type=typ)


def _same_metadata(a: pa.DataType, b: pa.DataType) -> bool:
    if a.num_fields != b.num_fields:
        return False
    for i in range(a.num_fields):
        fa, fb = a.field(i), b.field(i)
        if (fa.metadata or {}) != (fb.metadata or {}) or not _same_metadata(fa.type, fb.type):
            return False
    return True


def _coalesce(mat: pa.ChunkedArray | None, inherited: pa.Array | None, rows: int) -> pa.Array | pa.ChunkedArray:
    """Materialized lineage where not null, else the inherited value."""
    if mat is not None and mat.type != pa.int64():
        raise StitchError(f"row-lineage column is {mat.type}, want int64")
    if mat is None:
        return inherited if inherited is not None else pa.nulls(rows, pa.int64())
    if inherited is None or mat.null_count == 0:
        return mat
    return pc.coalesce(mat, inherited)


def _conform(col: pa.ChunkedArray | None, target: pa.Field, rows: int) -> pa.Array | pa.ChunkedArray:
    """A read column as the target field's type: nulls when the file
    predates the field, struct children matched by field id (a renamed
    child keeps its values), other differences (promotions) cast."""
    if col is None:
        return pa.nulls(rows, target.type)
    if col.type == target.type:
        return col
    if pa.types.is_struct(target.type) and pa.types.is_struct(col.type):
        return pa.chunked_array([_conform_struct(c, target.type) for c in col.chunks], type=target.type)
    if _has_struct(target.type) and _same_kind(col.type, target.type):
        return pa.chunked_array([_conform_nested(c, target.type) for c in col.chunks], type=target.type)
    try:
        return col.cast(target.type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise StitchError(f"column {target.name!r} is {col.type} in a file, the table says {target.type}") from exc


def _has_struct(t: pa.DataType) -> bool:
    """A list or map with a struct somewhere inside (whose children must be
    matched by id rather than cast by name)."""
    if pa.types.is_map(t):
        return any(pa.types.is_struct(x) or _has_struct(x) for x in (t.key_type, t.item_type))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.types.is_struct(t.value_type) or _has_struct(t.value_type)
    return False


def _same_kind(a: pa.DataType, b: pa.DataType) -> bool:
    return (pa.types.is_map(a) and pa.types.is_map(b)) or (
        not pa.types.is_map(a) and not pa.types.is_map(b) and
        ((pa.types.is_list(a) and pa.types.is_list(b)) or (pa.types.is_large_list(a) and pa.types.is_large_list(b))))


def _conform_nested(arr: pa.Array, typ: pa.DataType) -> pa.Array:
    """A list or map array as ``typ``: its elements (keys, values)
    conformed like columns, the offsets and nulls kept."""
    mask = arr.is_null() if arr.null_count else None

    def elems(values: pa.Array, want: pa.Field) -> pa.Array:
        got = _conform(pa.chunked_array([values]), want, len(values))
        return got.combine_chunks() if isinstance(got, pa.ChunkedArray) else got

    if pa.types.is_map(typ):
        return pa.MapArray.from_arrays(arr.offsets, elems(arr.keys, typ.key_field), elems(arr.items, typ.item_field),
                                       type=typ, mask=mask)
    cls = pa.LargeListArray if pa.types.is_large_list(typ) else pa.ListArray
    return cls.from_arrays(arr.offsets, elems(arr.values, typ.value_field), type=typ, mask=mask)


def _conform_struct(arr: pa.StructArray, typ: pa.StructType) -> pa.StructArray:
    by_id = {field_id(arr.type.field(i)): i for i in range(arr.type.num_fields)}
    children = []
    for i in range(typ.num_fields):
        want = typ.field(i)
        idx = by_id.get(field_id(want))
        if idx is None:
            children.append(pa.nulls(len(arr), want.type))
            continue
        child = arr.field(idx)
        chunked = _conform(pa.chunked_array([child]), want, len(arr))
        children.append(chunked.combine_chunks() if isinstance(chunked, pa.ChunkedArray) else chunked)
    mask = arr.is_null() if arr.null_count else None
    return pa.StructArray.from_arrays(children, fields=list(typ), mask=mask)


def _drop_deleted(io: Any, task: ScanTask, df: PlanDataFile, table: pa.Table) -> pa.Table:
    """Drop the rows at the positions the task's position deletes name."""
    rows = int(df["record-count"])
    keep: pa.BooleanArray | None = None
    for d in task.get("delete-files", []):
        if d.get("content") != "position-deletes":
            continue
        mask = _position_mask(io, d, df["file-path"], rows)
        keep = mask if keep is None else pc.and_(keep, mask)
    return table if keep is None else table.filter(keep)


def _position_mask(io: Any, d: PlanDeleteFile, data_file: str, rows: int) -> pa.BooleanArray:
    if d.get("file-format", "").lower() == "puffin" or d.get("content-offset") is not None:
        if d.get("content-offset") is None or d.get("content-size-in-bytes") is None:
            raise DeletesError(f"deletion vector {d.get('file-path')} has no blob range")
        bitmap = read_dv(io, d["file-path"], int(d["content-offset"]), int(d["content-size-in-bytes"]),
                         d.get("record-count"))
        return keep_mask(bitmap, rows)
    keep = np.ones(rows, dtype=bool)
    pos = positions_from_file(io, d["file-path"], data_file)
    keep[pos[pos < rows]] = False
    return pa.array(keep)


def _apply_equality(io: Any, eq: PlanDeleteFile, table: pa.Table, schema: pa.Schema,
                    mapping: list[dict[str, Any]] | None = None) -> pa.Table:
    """Anti-join the rows with one equality-delete file (the planner has
    already kept only the files whose sequence number makes them apply)."""
    ids = eq.get("equality-ids") or []
    if not ids:
        raise DeletesError(f"equality delete file {eq.get('file-path')} has no equality ids")
    targets = [_target(schema, fid) for fid in ids]
    with io.open_input(eq["file-path"]) as f:
        pf = pq.ParquetFile(f)
        by_id = _columns_by_id(apply_name_mapping(pf.schema_arrow, mapping), eq["file-path"])
        missing = [fid for fid in ids if fid not in by_id]
        if missing:
            raise DeletesError(f"equality delete file {eq['file-path']} has no column for field {missing[0]}")
        deletes = pf.read(columns=[by_id[fid] for fid in ids])
    renamed = pa.table([_conform(deletes.column(by_id[fid]), t, deletes.num_rows) for fid, t in zip(ids, targets)],
                       names=[t.name for t in targets])
    return anti_join(table, renamed, [t.name for t in targets])
