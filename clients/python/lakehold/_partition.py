"""Partition transforms applied to Arrow data, for writing appended files.

Each transform follows the Iceberg spec (bucket: 32-bit Murmur3 of the
value's single-value bytes; truncate; year/month/day/hour since the epoch;
identity; void). Values come back as Arrow arrays and as the JSON literals
a files commit's ``partition`` object takes (keyed by partition field name).
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import struct
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import LakeholdError

_US_PER_DAY = 86_400_000_000
_US_PER_HOUR = 3_600_000_000


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """Murmur3 x86 32-bit hash of ``data`` as a signed int (Iceberg's bucket hash)."""
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & 0xFFFFFFFF
    n = len(data) // 4
    for (k,) in struct.iter_unpack("<I", data[: n * 4]):
        k = (k * c1) & 0xFFFFFFFF
        k = ((k << 15) | (k >> 17)) & 0xFFFFFFFF
        h ^= (k * c2) & 0xFFFFFFFF
        h = ((h << 13) | (h >> 19)) & 0xFFFFFFFF
        h = (h * 5 + 0xE6546B64) & 0xFFFFFFFF
    tail = data[n * 4:]
    k = 0
    for i, b in enumerate(tail):
        k |= b << (8 * i)
    if tail:
        k = (k * c1) & 0xFFFFFFFF
        k = ((k << 15) | (k >> 17)) & 0xFFFFFFFF
        h ^= (k * c2) & 0xFFFFFFFF
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def _hash_bytes(value: Any, t: pa.DataType) -> bytes:
    """The single-value bytes Iceberg hashes for ``value`` of Arrow type ``t``."""
    if pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_timestamp(t) or pa.types.is_time(t):
        return struct.pack("<q", int(value))
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return str(value).encode()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return bytes(value)
    if pa.types.is_decimal(t):
        unscaled = int(_decimal.Decimal(value).scaleb(t.scale))
        length = max(1, (unscaled.bit_length() + 8) // 8)
        return unscaled.to_bytes(length, "big", signed=True)
    raise LakeholdError(f"bucket transform of type {t} is not supported")


def _as_int(arr: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """Dates as days, timestamps and times as their unit, for arithmetic."""
    t = arr.type
    if pa.types.is_date(t):
        return pc.cast(arr, pa.int32()).cast(pa.int64())
    if pa.types.is_timestamp(t) or pa.types.is_time(t):
        return pc.cast(arr, pa.int64())
    return arr


def _micros(arr: pa.ChunkedArray | pa.Array) -> np.ndarray:
    t = arr.type
    if pa.types.is_date(t):
        days = pc.cast(arr, pa.int32()).to_numpy(zero_copy_only=False)
        return days.astype("float64") * _US_PER_DAY
    scale = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": 1e-3}[t.unit]
    return pc.cast(arr, pa.int64()).to_numpy(zero_copy_only=False).astype("float64") * scale


def apply(transform: str, arr: pa.ChunkedArray | pa.Array) -> pa.Array:
    """The partition values of ``arr`` under ``transform`` (nulls stay null).
    LakeholdError for a transform or type it does not support."""
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    valid = pc.is_valid(arr)
    if transform == "identity":
        return arr
    if transform == "void":
        return pa.nulls(len(arr), pa.int32())
    if transform.startswith("bucket["):
        n = int(transform[7:-1])
        uniq = pc.unique(arr.drop_null())
        table = {v: (murmur3_32(_hash_bytes(v, arr.type)) & 0x7FFFFFFF) % n
                 for v in _as_int(uniq).to_pylist()}
        return pa.array([table[v] if v is not None else None for v in _as_int(arr).to_pylist()], pa.int32())
    if transform.startswith("truncate["):
        w = int(transform[9:-1])
        t = arr.type
        if pa.types.is_integer(t):
            return pc.subtract(arr, _mod(arr, w))
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return pc.utf8_slice_codeunits(arr, 0, w)
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            return pc.binary_slice(arr, 0, w)
        raise LakeholdError(f"truncate of type {t} is not supported")
    if transform in ("year", "month", "day", "hour"):
        if not (pa.types.is_date(arr.type) or pa.types.is_timestamp(arr.type)):
            raise LakeholdError(f"{transform} transform needs a date or timestamp column, not {arr.type}")
        us = _micros(arr)
        if transform == "hour":
            out = np.floor_divide(us, _US_PER_HOUR)
        elif transform == "day":
            out = np.floor_divide(us, _US_PER_DAY)
        else:
            days = np.nan_to_num(np.floor_divide(us, _US_PER_DAY)).astype("int64")
            dates = days.astype("datetime64[D]")
            years = dates.astype("datetime64[Y]").astype("int64")
            out = years if transform == "year" else years * 12 + (dates.astype("datetime64[M]").astype("int64") - years * 12)
        res = pa.array(np.nan_to_num(out).astype("int64"), pa.int32() if transform != "day" else pa.int64())
        if transform == "day":
            res = pc.cast(pc.cast(res, pa.int32()), pa.date32())
        return pc.if_else(valid, res, pa.scalar(None, res.type))
    raise LakeholdError(f"unknown partition transform {transform!r}")


def _mod(arr: pa.Array, w: int) -> pa.Array:
    """Non-negative ``arr mod w`` for integers (Iceberg truncates toward -inf)."""
    r = pc.subtract(arr, pc.multiply(pc.divide(arr, w), w))  # sign of arr
    return pc.if_else(pc.less(r, 0), pc.add(r, w), r)


def json_value(value: Any, t: pa.DataType) -> Any:
    """The JSON literal of one partition value of Arrow type ``t``."""
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        epoch = _dt.datetime(1970, 1, 1, tzinfo=value.tzinfo)
        return (value - epoch) // _dt.timedelta(microseconds=1)
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, _decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


def path_value(value: Any) -> str:
    """A partition value as a path segment."""
    if value is None:
        return "null"
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return value.isoformat()
    return quote(str(value), safe="")


def split(data: pa.Table, spec: dict[str, Any], names_by_id: dict[int, str]) -> Iterator[tuple[dict[str, Any], str, pa.Table]]:
    """Split ``data`` by partition ``spec`` (PartitionSpec JSON): yields
    (partition object for the commit, relative path, rows). One group for
    an unpartitioned spec."""
    fields = spec.get("fields") or []
    if not fields:
        yield {}, "", data
        return
    parts = {f["name"]: apply(f["transform"], data.column(names_by_id[f["source-id"]])) for f in fields}
    keys = pa.table({**{f"p{i}": parts[f["name"]] for i, f in enumerate(fields)},
                     "__row": pa.array(np.arange(data.num_rows, dtype="int64"))})
    groups = keys.group_by([f"p{i}" for i in range(len(fields))], use_threads=False).aggregate([("__row", "list")])
    for g in groups.to_pylist():
        values = [g[f"p{i}"] for i in range(len(fields))]
        partition = {f["name"]: json_value(v, parts[f["name"]].type) for f, v in zip(fields, values)}
        path = "/".join(f"{f['name']}={path_value(v)}" for f, v in zip(fields, values))
        yield partition, path, data.take(pa.array(g["__row_list"], pa.int64()))
