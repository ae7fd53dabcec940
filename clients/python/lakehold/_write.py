"""Writing Parquet files the catalog accepts, and their content stats.

Every file is written with the table's Arrow schema, so each column (and
every nested element, key and value) carries its Parquet field id. Stats
are computed from the Arrow data of the file, for top-level primitive
columns only (nested fields' stats are not used for pruning), in the
``content-stats`` wire form keyed by field id.
"""

from __future__ import annotations

import math
import uuid
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from . import _schema
from ._io import FileIO

_COMPRESSION = "zstd"
STRING_BOUND_CHARS = 16


def new_location(table_location: str, subdir: str = "", suffix: str = "") -> str:
    """A fresh file location under ``{table}/data/``."""
    base = f"{table_location}/data" + (f"/{subdir}" if subdir else "")
    return f"{base}/{uuid.uuid4().hex}{suffix}.parquet"


def write(io: FileIO, location: str, data: pa.Table, dictionary_for_text_only: bool = False) -> int:
    """Write ``data`` (already in its final schema) as Parquet at
    ``location``; returns the file size. With
    ``dictionary_for_text_only`` only string and binary columns are
    dictionary-encoded (column files: refreshed scores and embeddings are
    mostly distinct values, where trying a dictionary first doubled the
    write time and grew the file). OSError when storage fails."""
    use_dictionary: bool | list[str] = True
    if dictionary_for_text_only:
        use_dictionary = [f.name for f in data.schema if _is_text(f.type)]
    with io.open_output(location) as sink:
        with pq.ParquetWriter(sink, data.schema, compression=_COMPRESSION, use_dictionary=use_dictionary) as writer:
            writer.write_table(data, row_group_size=128 * 1024)
        size = sink.tell()
    return int(size)


def _is_text(t: pa.DataType) -> bool:
    return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_dictionary(t))


def _bound(value: Any, t: pa.DataType) -> Any:
    """A JSON bound for scalar ``value`` of type ``t``, or None when the type
    has no JSON bound here (nested, binary, uuid) or the value is infinite."""
    if value is None:
        return None
    if pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
        return value
    if pa.types.is_floating(t):
        v = float(value)
        return v if math.isfinite(v) else None
    if pa.types.is_decimal(t):
        return str(value)
    return None


def _int_scalar(s: pa.Scalar) -> Any:
    """Dates as days, timestamps as their unit, from a scalar."""
    if not s.is_valid:
        return None
    if pa.types.is_date(s.type):
        return s.cast(pa.int32()).as_py()
    return s.cast(pa.int64()).as_py()


def content_stats(data: pa.Table) -> dict[str, dict[str, Any]]:
    """content-stats for the top-level primitive columns of ``data`` (whose
    fields carry field ids): value, null and NaN counts and tight bounds."""
    out: dict[str, dict[str, Any]] = {}
    for f in data.schema:
        fid = _schema.field_id(f)
        t = f.type
        if fid is None or pa.types.is_nested(t):
            continue
        col = data.column(f.name)
        st: dict[str, Any] = {"value-count": len(col), "null-value-count": col.null_count}
        values = col
        if pa.types.is_floating(t):
            nan = pc.is_nan(col)
            st["nan-value-count"] = int(pc.sum(pc.cast(nan, pa.int64())).as_py() or 0)
            values = pc.filter(col, pc.invert(pc.fill_null(nan, False)))
        if len(values) - values.null_count > 0 and not (pa.types.is_binary(t) or pa.types.is_large_binary(t)
                                                       or pa.types.is_fixed_size_binary(t)):
            mm = pc.min_max(values)
            lo, hi = mm["min"], mm["max"]
            if pa.types.is_date(t) or pa.types.is_timestamp(t) or pa.types.is_time(t):
                if pa.types.is_timestamp(t) and t.unit != "us" or pa.types.is_time(t) and t.unit != "us":
                    lo = hi = None
                else:
                    lo, hi = _int_scalar(lo), _int_scalar(hi)
            else:
                lo, hi = _bound(lo.as_py(), t), _bound(hi.as_py(), t)
            tight = True
            if isinstance(lo, str) and isinstance(hi, str):
                lo, hi, tight = _truncate_bounds(lo, hi)
            if lo is not None and hi is not None:
                st.update({"lower-bound": lo, "upper-bound": hi, "tight-bounds": tight})
        out[str(fid)] = st
    return out


def _truncate_bounds(lo: str, hi: str) -> tuple[str | None, str | None, bool]:
    """String bounds cut to STRING_BOUND_CHARS characters, as Iceberg's
    default ``truncate(16)`` metrics do, so long values do not bloat the
    manifests: a prefix is still a lower bound; the upper bound's last kept
    character is incremented. Bounds are then no longer tight."""
    tight = True
    if len(lo) > STRING_BOUND_CHARS:
        lo, tight = lo[:STRING_BOUND_CHARS], False
    if len(hi) > STRING_BOUND_CHARS:
        tight = False
        cut = hi[:STRING_BOUND_CHARS]
        while cut:
            last = ord(cut[-1]) + 1
            if last <= 0x10FFFF and not 0xD800 <= last <= 0xDFFF:
                return lo, cut[:-1] + chr(last), tight
            cut = cut[:-1]
        return lo, None, tight
    return lo, hi, tight


def data_file_entry(location: str, data: pa.Table, size: int, spec_id: int, partition: dict[str, Any]) -> dict[str, Any]:
    """One ``add-data-files`` entry of a files commit."""
    entry: dict[str, Any] = {"location": location, "file-format": "parquet", "record-count": data.num_rows,
                             "file-size-in-bytes": size, "spec-id": spec_id, "content-stats": content_stats(data)}
    if partition:
        entry["partition"] = partition
    return entry
