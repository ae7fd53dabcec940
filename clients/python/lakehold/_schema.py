"""Iceberg schema JSON <-> pyarrow schema.

Arrow fields converted from Iceberg carry their field id as
``PARQUET:field_id`` metadata on every level (struct children, list
elements, map keys and values), which is what Parquet writers turn into
Parquet field ids and what the catalog requires of data and column files.
Arrow schemas sent to the catalog get placeholder ids; the catalog assigns
fresh ones and the caller reads them back from the answer.
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa

from .errors import LakeholdError

FIELD_ID_KEY = b"PARQUET:field_id"
ROW_ID_FIELD_ID = 2147483540
LAST_UPDATED_FIELD_ID = 2147483539
ROW_ID = "_row_id"
LAST_UPDATED = "_last_updated_sequence_number"

_PRIMITIVE_TO_ARROW: dict[str, pa.DataType] = {
    "boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
    "double": pa.float64(), "date": pa.date32(), "time": pa.time64("us"),
    "timestamp": pa.timestamp("us"), "timestamptz": pa.timestamp("us", tz="UTC"),
    "timestamp_ns": pa.timestamp("ns"), "timestamptz_ns": pa.timestamp("ns", tz="UTC"),
    "string": pa.string(), "uuid": pa.binary(16), "binary": pa.binary(),
}
_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_FIXED = re.compile(r"fixed\[\s*(\d+)\s*\]")


def field_id(field: pa.Field) -> int | None:
    """The ``PARQUET:field_id`` of ``field``, or None."""
    md = field.metadata or {}
    raw = md.get(FIELD_ID_KEY)
    return int(raw) if raw is not None else None


def _meta(fid: int) -> dict[bytes, bytes]:
    return {FIELD_ID_KEY: str(fid).encode()}


# --- Iceberg -> Arrow ---------------------------------------------------------

def to_arrow_type(t: Any) -> pa.DataType:
    """The Arrow type of Iceberg type JSON ``t``; LakeholdError when unknown."""
    if isinstance(t, str):
        if t in _PRIMITIVE_TO_ARROW:
            return _PRIMITIVE_TO_ARROW[t]
        if m := _DECIMAL.fullmatch(t):
            return pa.decimal128(int(m.group(1)), int(m.group(2)))
        if m := _FIXED.fullmatch(t):
            return pa.binary(int(m.group(1)))
        raise LakeholdError(f"Iceberg type {t!r} has no Arrow mapping here")
    kind = t.get("type")
    if kind == "struct":
        return pa.struct([to_arrow_field(f) for f in t["fields"]])
    if kind == "list":
        return pa.list_(pa.field("element", to_arrow_type(t["element"]), not t.get("element-required", False),
                                      _meta(t["element-id"])))
    if kind == "map":
        key = pa.field("key", to_arrow_type(t["key"]), False, _meta(t["key-id"]))
        value = pa.field("value", to_arrow_type(t["value"]), not t.get("value-required", False), _meta(t["value-id"]))
        return pa.map_(key, value)
    raise LakeholdError(f"Iceberg type {t!r} has no Arrow mapping here")


def to_arrow_field(f: dict[str, Any]) -> pa.Field:
    """An Arrow field (with its field id) for Iceberg NestedField JSON ``f``."""
    return pa.field(f["name"], to_arrow_type(f["type"]), not f.get("required", False), _meta(f["id"]))


def to_arrow_schema(schema: dict[str, Any]) -> pa.Schema:
    """The Arrow schema of Iceberg schema JSON ``schema`` (field ids on every level)."""
    return pa.schema([to_arrow_field(f) for f in schema["fields"]])


def lineage_field(name: str) -> pa.Field:
    """The Arrow field of a row-lineage column (``_row_id`` or
    ``_last_updated_sequence_number``), nullable long with its reserved id."""
    fid = ROW_ID_FIELD_ID if name == ROW_ID else LAST_UPDATED_FIELD_ID
    return pa.field(name, pa.int64(), True, _meta(fid))


# --- Arrow -> Iceberg ---------------------------------------------------------

class _Ids:
    def __init__(self) -> None:
        self.last = 0

    def next(self) -> int:
        self.last += 1
        return self.last


def from_arrow_type(t: pa.DataType, ids: _Ids) -> Any:
    """Iceberg type JSON for Arrow type ``t``, numbering nested fields with
    ``ids``; LakeholdError for types Iceberg cannot hold."""
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_integer(t):
        if pa.types.is_uint64(t):
            raise LakeholdError("uint64 has no Iceberg type; cast to int64")
        return "long" if t.bit_width == 64 or pa.types.is_uint32(t) else "int"
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision}, {t.scale})"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_fixed_size_binary(t):
        return f"fixed[{t.byte_width}]"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return "binary"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_time(t):
        return "time"
    if pa.types.is_timestamp(t):
        suffix = "_ns" if t.unit == "ns" else ""
        return ("timestamptz" if t.tz else "timestamp") + suffix
    if pa.types.is_struct(t):
        return {"type": "struct", "fields": _fields([t.field(i) for i in range(t.num_fields)], ids)}
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_list_view(t):
        eid = ids.next()
        return {"type": "list", "element-id": eid, "element": from_arrow_type(t.value_type, ids),
                "element-required": not t.value_field.nullable}
    if pa.types.is_map(t):
        kid, vid = ids.next(), ids.next()
        return {"type": "map", "key-id": kid, "key": from_arrow_type(t.key_type, ids),
                "value-id": vid, "value": from_arrow_type(t.item_type, ids),
                "value-required": not t.item_field.nullable}
    if pa.types.is_dictionary(t):
        return from_arrow_type(t.value_type, ids)
    raise LakeholdError(f"Arrow type {t} has no Iceberg type")


def _fields(fields: list[pa.Field], ids: _Ids) -> list[dict[str, Any]]:
    # Ids of a level first, then their children, as Iceberg numbers them.
    numbered = [(f, ids.next()) for f in fields]
    return [{"id": fid, "name": f.name, "required": not f.nullable, "type": from_arrow_type(f.type, ids)}
            for f, fid in numbered]


def from_arrow_schema(schema: pa.Schema, first_id: int = 0) -> dict[str, Any]:
    """Iceberg schema JSON for ``schema`` with ids numbered after
    ``first_id`` (placeholders for create; the catalog assigns fresh ones).
    LakeholdError for types Iceberg cannot hold."""
    ids = _Ids()
    ids.last = first_id
    return {"type": "struct", "schema-id": 0, "fields": _fields(list(schema), ids)}


def max_field_id(t: Any) -> int:
    """The largest field id inside Iceberg type JSON ``t`` (0 for primitives)."""
    if isinstance(t, str):
        return 0
    kind = t.get("type")
    if kind == "struct":
        return max([0] + [max(f["id"], max_field_id(f["type"])) for f in t["fields"]])
    if kind == "list":
        return max(t["element-id"], max_field_id(t["element"]))
    if kind == "map":
        return max(t["key-id"], t["value-id"], max_field_id(t["key"]), max_field_id(t["value"]))
    return 0


# --- partition specs -----------------------------------------------------------

_TRANSFORM = re.compile(r"identity|year|month|day|hour|void|bucket\[\d+\]|truncate\[\d+\]")


def partition_spec(spec: list[tuple[str, str]] | None, schema: dict[str, Any]) -> dict[str, Any]:
    """A PartitionSpec JSON from ``[(transform, source column), ...]``
    against Iceberg schema JSON ``schema``. LakeholdError for an unknown
    transform or column."""
    by_name = {f["name"]: f["id"] for f in schema["fields"]}
    fields = []
    for i, (transform, column) in enumerate(spec or []):
        if not _TRANSFORM.fullmatch(transform):
            raise LakeholdError(f"unknown partition transform {transform!r}")
        if column not in by_name:
            raise LakeholdError(f"partition source column {column!r} is not a top-level column of the schema")
        suffix = "" if transform == "identity" else "_" + re.sub(r"\[(\d+)\]", r"_\1", transform)
        fields.append({"source-id": by_name[column], "field-id": 1000 + i, "name": column + suffix,
                       "transform": transform})
    return {"spec-id": 0, "fields": fields}
