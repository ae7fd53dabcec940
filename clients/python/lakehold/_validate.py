"""The checks every write makes before it writes a file.

``append``, ``update_columns`` and ``merge_columns`` (and their Spark
versions) compare what they are given with the table's schema here, and
only then write. The rules:

* only declared columns: a column the table (append), the ``outputs``
  (update_columns) or the table (merge_columns) does not declare is an
  error, never dropped;
* exact types: each column's Arrow type must be the Arrow type of its
  Iceberg field, up to the Arrow encodings of one logical type (string /
  large_string / string_view, binary / large_binary / binary_view, list /
  large_list / fixed_size_list, dictionary-encoded values, the ``null``
  type of an all-null column, struct children in any order, a timestamptz
  column in any time zone since its values are instants);
* with ``cast="safe"`` also widening casts that lose nothing: smaller
  integers to ``int``/``long``, ``float16``/``float32`` to ``double``,
  decimals to a precision and scale that hold every value, timestamps and
  times to a finer unit (a value out of range is refused). Never strings
  to numbers, floats to integers or anything narrowing;
* required fields hold no nulls, at every nesting level (a required list
  element, map value or struct child is checked where its parent is
  present);
* merge keys have the key field's type under the same rules (float keys
  for a ``long`` key are refused even when every value is integral).

Every failure is a :class:`~lakehold.errors.ValidationError` (status None:
the library refused it, not the catalog) with one of the ``reason``
constants below and ``details`` naming the column.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Sequence
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from .errors import ValidationError

CastMode = Literal["exact", "safe"]
CAST_MODES: tuple[str, ...] = ("exact", "safe")

UNDECLARED_COLUMN = "undeclared-column"
UNKNOWN_COLUMN = "unknown-column"
MISSING_COLUMN = "missing-column"
DUPLICATE_COLUMN = "duplicate-column"
TYPE_MISMATCH = "type-mismatch"
UNSAFE_CAST = "unsafe-cast"
REQUIRED_NULL = "null-in-required-field"
KEY_TYPE = "key-type-mismatch"
ROW_COUNT = "row-count-mismatch"
NOT_TABULAR = "not-tabular"
NO_ROWS = "no-rows"
NO_COLUMNS = "no-columns"
CAST_MODE = "invalid-cast-mode"

_ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError)


def fail(reason: str, message: str, **details: Any) -> ValidationError:
    """The ValidationError of a refused input (to raise)."""
    return ValidationError(message, status=None, reason=reason, details=details)


def cast_mode(value: Any) -> CastMode:
    """``value`` as a CastMode; ValidationError (``invalid-cast-mode``) otherwise."""
    if value == "exact":
        return "exact"
    if value == "safe":
        return "safe"
    raise fail(CAST_MODE, f"cast must be one of {list(CAST_MODES)}, not {value!r}", got=repr(value))


def to_arrow(data: Any, what: str = "data") -> pa.Table:
    """An Arrow table from a pyarrow Table/RecordBatch/reader, a pandas or
    polars DataFrame, or a dict of columns. ValidationError
    (``not-tabular``) for anything else or a conversion pyarrow refuses
    (mixed-type pandas columns, columns of different lengths)."""
    try:
        if isinstance(data, pa.Table):
            return data
        if isinstance(data, pa.RecordBatch):
            return pa.Table.from_batches([data])
        if isinstance(data, pa.RecordBatchReader):
            return data.read_all()
        if isinstance(data, dict):
            return pa.table(data)
        mod = type(data).__module__.split(".")[0]
        if mod == "pandas":
            return pa.Table.from_pandas(data, preserve_index=False)
        if mod == "polars":
            out = data.to_arrow()
            if isinstance(out, pa.Table):
                return out
    except _ARROW_ERRORS as e:
        raise fail(NOT_TABULAR, f"{what} does not convert to an Arrow table: {e}") from None
    raise fail(NOT_TABULAR, f"{what}: cannot turn {type(data).__name__} into an Arrow table", got=type(data).__name__)


# --- types ---------------------------------------------------------------------

_STRINGS = (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view)
_BINARIES = (pa.types.is_binary, pa.types.is_large_binary, pa.types.is_binary_view)
_LISTS = (pa.types.is_list, pa.types.is_large_list, pa.types.is_fixed_size_list)
_UNITS = {"s": 0, "ms": 1, "us": 2, "ns": 3}


def _any(preds: tuple[Any, ...], t: pa.DataType) -> bool:
    return any(p(t) for p in preds)


class _Mismatch(Exception):
    """Why a column's type does not fit its field: ``reason`` and a message
    naming the nested ``path``. Internal; turned into a ValidationError."""

    def __init__(self, reason: str, path: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.path, self.message = reason, path, message


def check_type(got: pa.DataType, want: pa.DataType, cast: CastMode, path: str) -> None:
    """Raise _Mismatch unless a column of type ``got`` can be written as a
    field of type ``want`` under ``cast`` (see the module's rules)."""
    if pa.types.is_dictionary(got):
        got = got.value_type
    if pa.types.is_null(got) or got == want:
        return
    if pa.types.is_struct(want):
        _check_struct(got, want, cast, path)
    elif pa.types.is_map(want):
        if not pa.types.is_map(got):
            raise _mismatch(got, want, path)
        check_type(got.key_type, want.key_type, cast, path + ".key")
        check_type(got.item_type, want.item_type, cast, path + ".value")
    elif pa.types.is_list(want):
        if not _any(_LISTS, got):
            raise _mismatch(got, want, path)
        check_type(got.value_type, want.value_type, cast, path + ".element")
    elif _any(_STRINGS, want):
        if not _any(_STRINGS, got):
            raise _mismatch(got, want, path)
    elif _any(_BINARIES, want):
        if not _any(_BINARIES, got):
            raise _mismatch(got, want, path)
    elif pa.types.is_timestamp(want):
        _check_timestamp(got, want, cast, path)
    elif not (cast == "safe" and _widens(got, want)):
        raise _mismatch(got, want, path, widening=cast == "exact" and _widens(got, want))


def _check_struct(got: pa.DataType, want: pa.DataType, cast: CastMode, path: str) -> None:
    if not pa.types.is_struct(got):
        raise _mismatch(got, want, path)
    have = {got.field(i).name: got.field(i) for i in range(got.num_fields)}
    names = {want.field(i).name for i in range(want.num_fields)}
    extra = [n for n in have if n not in names]
    if extra:
        raise _Mismatch(UNDECLARED_COLUMN, f"{path}.{extra[0]}",
                       f"{path}.{extra[0]} is not a field of the table's struct {path}")
    for i in range(want.num_fields):
        f = want.field(i)
        if f.name in have:
            check_type(have[f.name].type, f.type, cast, f"{path}.{f.name}")
        elif not f.nullable:
            raise _Mismatch(MISSING_COLUMN, f"{path}.{f.name}", f"required field {path}.{f.name} is missing")


def _check_timestamp(got: pa.DataType, want: pa.DataType, cast: CastMode, path: str) -> None:
    if not pa.types.is_timestamp(got) or (got.tz is None) != (want.tz is None):
        raise _mismatch(got, want, path)
    if got.unit == want.unit:
        return  # a timestamptz in another zone holds the same instants
    if not (cast == "safe" and _UNITS[got.unit] < _UNITS[want.unit]):
        raise _mismatch(got, want, path, widening=cast == "exact" and _UNITS[got.unit] < _UNITS[want.unit])


def _widens(got: pa.DataType, want: pa.DataType) -> bool:
    """Whether every value of ``got`` is exactly a value of ``want``."""
    if pa.types.is_integer(got) and pa.types.is_integer(want) and pa.types.is_signed_integer(want):
        return bool(got.bit_width <= want.bit_width if pa.types.is_signed_integer(got) else
                    got.bit_width < want.bit_width)
    if pa.types.is_floating(got) and pa.types.is_floating(want):
        return bool(got.bit_width <= want.bit_width)
    if pa.types.is_decimal(got) and pa.types.is_decimal(want):
        return bool(want.scale >= got.scale and want.precision - want.scale >= got.precision - got.scale)
    if pa.types.is_time(got) and pa.types.is_time(want):
        return _UNITS[got.unit] <= _UNITS[want.unit]
    return False


def _mismatch(got: pa.DataType, want: pa.DataType, path: str, widening: bool = False) -> _Mismatch:
    hint = " (a widening cast: pass cast=\"safe\" to allow it)" if widening else ""
    return _Mismatch(TYPE_MISMATCH, path, f"{path} is {got}, the table's field is {want}{hint}")


# --- values --------------------------------------------------------------------

def convert(col: pa.ChunkedArray | pa.Array, field: pa.Field, cast: CastMode, path: str,
            to: pa.DataType | None = None) -> pa.ChunkedArray:
    """``col`` checked against ``field`` and converted to its Arrow type
    (or ``to``, the same type with other nullability: a column file's).
    ValidationError for a type that does not fit or a safe cast whose
    value is out of range."""
    try:
        check_type(col.type, field.type, cast, path)
    except _Mismatch as m:
        raise fail(m.reason, m.message, column=m.path, expected=str(field.type), got=str(col.type)) from None
    return _cast(col, to if to is not None else field.type, path)


def _cast(col: pa.ChunkedArray | pa.Array, target: pa.DataType, path: str) -> pa.ChunkedArray:
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    try:
        out = [c if c.type == target else c.cast(target, safe=True) for c in chunks]
    except _ARROW_ERRORS as e:
        raise fail(UNSAFE_CAST, f"{path} ({col.type}) does not convert to {target} without loss: {e}",
                   column=path, expected=str(target), got=str(col.type)) from None
    return pa.chunked_array(out, type=target)


def relaxed(t: pa.DataType) -> pa.DataType:
    """``t`` with every nested field optional (ids kept). Values are cast
    to it first: pyarrow refuses a cast that puts a null into a required
    child, and the null check below says which field it was."""
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(relaxed(t.field(i).type)).with_nullable(True)
                          for i in range(t.num_fields)])
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(relaxed(t.value_type)).with_nullable(True))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(relaxed(t.value_type)).with_nullable(True))
    if pa.types.is_map(t):
        return pa.map_(t.key_field, t.item_field.with_type(relaxed(t.item_type)).with_nullable(True))
    return t


def strict(arr: pa.Array, t: pa.DataType) -> pa.Array:
    """``arr`` (of ``relaxed(t)``, its required fields checked) as type
    ``t``. Pyarrow (casts and the Parquet writer) refuses a null in a
    required child even under a null parent, where Iceberg allows it: such
    slots are filled with a placeholder no reader sees."""
    if pa.types.is_struct(t):
        mask = arr.is_null() if arr.null_count else None
        children = [strict(_filled(arr.field(i)) if not t.field(i).nullable else arr.field(i), t.field(i).type)
                    for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(t), mask=mask)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        values = arr.values if t.value_field.nullable else _filled(arr.values)
        cls = pa.ListArray if pa.types.is_list(t) else pa.LargeListArray
        return cls.from_arrays(arr.offsets, strict(values, t.value_type), type=t,
                               mask=arr.is_null() if arr.null_count else None)
    if pa.types.is_map(t):
        items = arr.items if t.item_field.nullable else _filled(arr.items)
        return pa.MapArray.from_arrays(arr.offsets, arr.keys, strict(items, t.item_type), type=t,
                                       mask=arr.is_null() if arr.null_count else None)
    return arr if arr.type == t else arr.cast(t)


def _filled(arr: pa.Array) -> pa.Array:
    """``arr`` with its nulls (only ever under absent parents) replaced by a
    placeholder: zero, empty, or a present struct of placeholders."""
    if not arr.null_count:
        return arr
    t = arr.type
    if pa.types.is_struct(t):
        return pa.StructArray.from_arrays([_filled(arr.field(i)) if not t.field(i).nullable else arr.field(i)
                                           for i in range(t.num_fields)], fields=list(t))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        return pc.fill_null(arr, pa.scalar([], t))
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pc.fill_null(arr, pa.scalar("", t))
    if pa.types.is_fixed_size_binary(t):
        return pc.fill_null(arr, pa.scalar(b"\0" * t.byte_width, t))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return pc.fill_null(arr, pa.scalar(b"", t))
    if pa.types.is_boolean(t):
        return pc.fill_null(arr, False)
    if pa.types.is_decimal(t):
        return pc.fill_null(arr, pa.scalar(decimal.Decimal(0), t))
    if pa.types.is_date(t):
        return pc.fill_null(arr, pa.scalar(datetime.date(1970, 1, 1), t))
    return pc.fill_null(arr, pa.scalar(0).cast(t))


def null_path(arr: pa.Array, field: pa.Field, path: str) -> str | None:
    """The path of the first required field (``field`` or one nested in it)
    that holds a null where its parent is present, or None. ``arr`` is of
    ``field``'s type."""
    if arr.null_count:
        if not field.nullable:
            return path
        arr = arr.filter(pc.is_valid(arr))
    t = field.type
    if pa.types.is_struct(t):
        for i in range(t.num_fields):
            if found := null_path(arr.field(i), t.field(i), f"{path}.{t.field(i).name}"):
                return found
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        return null_path(arr.flatten(), t.value_field, path + ".element")
    elif pa.types.is_map(t):
        # Null maps were filtered out above: the entries between the first
        # and the last offset are exactly the present maps' entries.
        offsets = arr.offsets
        start, end = (offsets[0].as_py(), offsets[-1].as_py()) if len(offsets) else (0, 0)
        return (null_path(arr.keys.slice(start, end - start), t.key_field, path + ".key")
                or null_path(arr.items.slice(start, end - start), t.item_field, path + ".value"))
    return None


def check_required(data: pa.Table, fields: Sequence[pa.Field]) -> None:
    """ValidationError (``null-in-required-field``) when a column of
    ``data`` named by ``fields`` holds a null a required field (at any
    level) does not allow."""
    for f in fields:
        col = data.column(f.name)
        for chunk in col.chunks:
            if found := null_path(chunk, f, f.name):
                raise fail(REQUIRED_NULL, f"required field {found} has nulls", column=found)


def conform(data: pa.Table, fields: Sequence[pa.Field], cast: CastMode, *, what: str, fill_missing: bool = False,
            nulls: bool | pa.Array = True, schema: pa.Schema | None = None) -> pa.Table:
    """``data`` with exactly ``fields``' columns, in their order and types.

    A column of ``data`` not in ``fields`` is ``undeclared-column``; a
    field missing from ``data`` is filled with nulls when ``fill_missing``
    and it is optional, else ``missing-column``. ``nulls`` checks required
    fields for nulls: all rows when True, none when False, or the rows a
    boolean mask selects (a filtered update writes only those). ``schema`` is the written schema (column
    files: every field optional), default ``fields``. ``what`` names the
    input in messages. Raises ValidationError."""
    names = data.column_names
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise fail(DUPLICATE_COLUMN, f"{what} has column {dup[0]!r} twice", column=dup[0])
    declared = {f.name for f in fields}
    extra = [n for n in names if n not in declared]
    if extra:
        raise fail(UNDECLARED_COLUMN, f"{what} has columns {extra} that were not declared "
                   f"(declared: {sorted(declared)})", column=extra[0])
    target = schema if schema is not None else pa.schema(list(fields))
    arrays: list[pa.ChunkedArray] = []
    for f, w in zip(fields, target):
        if f.name in names:
            arrays.append(convert(data.column(f.name), f, cast, f.name, to=relaxed(w.type)))
        elif fill_missing and f.nullable:
            arrays.append(pa.chunked_array([pa.nulls(data.num_rows, relaxed(w.type))]))
        else:
            raise fail(MISSING_COLUMN, f"{what} has no column {f.name!r}" +
                       (" (a required field)" if not f.nullable else ""), column=f.name)
    # Before strict(): it fills nulls under required children with
    # placeholders, which would hide them from the check.
    if nulls is not False:
        checked = pa.Table.from_arrays(arrays, names=[f.name for f in fields])
        check_required(checked if nulls is True else checked.filter(nulls), fields)
    out = [pa.chunked_array([strict(c, w.type) for c in a.chunks], type=w.type) for a, w in zip(arrays, target)]
    return pa.Table.from_arrays(out, schema=target)


def check_rows(got: int, want: int, what: str) -> None:
    """ValidationError (``row-count-mismatch``) when ``got`` != ``want``."""
    if got != want:
        raise fail(ROW_COUNT, f"{what} has {got} rows for {want}", expected=want, got=got)


def merge_keys(keys: pa.ChunkedArray | pa.Array, field: pa.Field, cast: CastMode) -> pa.Array:
    """Source keys checked against the table's key ``field`` and converted
    to its type, as one array. ValidationError (``key-type-mismatch``)
    when their type does not fit (floats for a ``long`` key included)."""
    try:
        check_type(keys.type, field.type, cast, field.name)
    except _Mismatch as m:
        raise fail(KEY_TYPE, f"merge key {m.message}", column=field.name, expected=str(field.type),
                   got=str(keys.type)) from None
    out = convert(keys, field.with_nullable(True), cast, field.name)
    return out.combine_chunks()
