"""The write-side checks of lakehold._validate, without a catalog: the
Arrow fields are the ones the library derives from Iceberg schema JSON."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa
import pytest

import lakehold
from lakehold import _schema, _validate

# One Iceberg schema with a field of every kind the rules treat apart.
SCHEMA = _schema.to_arrow_schema({"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": True, "type": "long"},
    {"id": 2, "name": "score", "required": False, "type": "double"},
    {"id": 3, "name": "label", "required": False, "type": "string"},
    {"id": 4, "name": "ts", "required": False, "type": "timestamp"},
    {"id": 5, "name": "tstz", "required": False, "type": "timestamptz"},
    {"id": 6, "name": "tags", "required": False,
     "type": {"type": "list", "element-id": 7, "element": "string", "element-required": True}},
    {"id": 8, "name": "point", "required": False, "type": {"type": "struct", "fields": [
        {"id": 9, "name": "x", "required": True, "type": "float"},
        {"id": 10, "name": "note", "required": False, "type": "string"}]}},
    {"id": 11, "name": "props", "required": False,
     "type": {"type": "map", "key-id": 12, "key": "string", "value-id": 13, "value": "int",
              "value-required": True}},
    {"id": 14, "name": "price", "required": False, "type": "decimal(10, 2)"},
    {"id": 15, "name": "n", "required": False, "type": "int"},
    {"id": 16, "name": "blob", "required": False, "type": "binary"},
]})


def field(name: str) -> pa.Field:
    return SCHEMA.field(name)


def reason(exc: pytest.ExceptionInfo[Any]) -> str | None:
    return exc.value.reason  # type: ignore[no-any-return]


def conform(data: pa.Table, names: list[str], cast: _validate.CastMode = "exact", **kw: Any) -> pa.Table:
    return _validate.conform(data, [field(n) for n in names], cast, what="data", **kw)


# --- columns ----------------------------------------------------------------------

def test_an_undeclared_column_is_refused_not_dropped() -> None:
    data = pa.table({"score": pa.array([1.0]), "extra": pa.array([1])})
    with pytest.raises(lakehold.ValidationError) as e:
        conform(data, ["score"])
    assert reason(e) == "undeclared-column" and e.value.details["column"] == "extra"
    assert e.value.status is None, "refused by the library, not the catalog"


def test_missing_columns_are_filled_only_when_optional_and_asked() -> None:
    data = pa.table({"id": pa.array([1, 2], pa.int64())})
    out = conform(data, ["id", "score"], fill_missing=True)
    assert out.column("score").to_pylist() == [None, None] and out.schema.field("score").type == pa.float64()
    with pytest.raises(lakehold.ValidationError) as e:
        conform(data, ["id", "score"])
    assert reason(e) == "missing-column"
    with pytest.raises(lakehold.ValidationError) as e:
        conform(pa.table({"score": [1.0]}), ["id", "score"], fill_missing=True)
    assert reason(e) == "missing-column" and "required" in e.value.message


def test_a_column_given_twice_is_refused() -> None:
    data = pa.Table.from_arrays([pa.array([1.0]), pa.array([2.0])], names=["score", "score"])
    with pytest.raises(lakehold.ValidationError) as e:
        conform(data, ["score"])
    assert reason(e) == "duplicate-column"


def test_output_keeps_field_ids_and_order() -> None:
    data = pa.table({"label": ["a"], "id": pa.array([1], pa.int64())})
    out = conform(data, ["id", "label"])
    assert out.column_names == ["id", "label"]
    assert [_schema.field_id(f) for f in out.schema] == [1, 3]


# --- types ------------------------------------------------------------------------

@pytest.mark.parametrize("name,array", [
    ("score", pa.array(["1.5"])),                                  # strings for a double
    ("score", pa.array([1], pa.int64())),                          # long for a double
    ("id", pa.array([1.0])),                                       # integral float for a long
    ("id", pa.array([1], pa.int32())),                             # narrower int, exact mode
    ("n", pa.array([1], pa.int64())),                              # wider int for an int
    ("label", pa.array([1])),
    ("ts", pa.array([dt.datetime(2026, 1, 1)], pa.timestamp("ms"))),    # wrong unit
    ("ts", pa.array([dt.datetime(2026, 1, 1)], pa.timestamp("us", "UTC"))),  # tz for a timestamp
    ("tstz", pa.array([dt.datetime(2026, 1, 1)], pa.timestamp("us"))),  # naive for a timestamptz
    ("price", pa.array([decimal.Decimal("1.5")], pa.decimal128(10, 1))),
    ("tags", pa.array([[1]], pa.list_(pa.int64()))),
    ("tags", pa.array(["a"])),
    ("point", pa.array([{"x": 1.0}], pa.struct([("x", pa.float64())]))),
    ("blob", pa.array(["a"])),
])
def test_a_type_that_is_not_the_fields_is_refused(name: str, array: pa.Array) -> None:
    with pytest.raises(lakehold.ValidationError) as e:
        conform(pa.table({name: array}), [name])
    assert reason(e) == "type-mismatch", e.value.message
    assert e.value.details["column"].split(".")[0] == name


@pytest.mark.parametrize("name,array", [
    ("label", pa.array(["a"], pa.large_string())),
    ("label", pa.array(["a"], pa.string_view())),
    ("label", pa.array(["a", "a"]).dictionary_encode()),
    ("blob", pa.array([b"a"], pa.large_binary())),
    ("tags", pa.array([["a"]], pa.large_list(pa.large_string()))),
    ("tags", pa.array([["a", "b"]], pa.list_(pa.string(), 2))),
    ("tstz", pa.array([dt.datetime(2026, 1, 1)], pa.timestamp("us", "Europe/Berlin"))),
    ("point", pa.array([{"note": "n", "x": 1.0}], pa.struct([("note", pa.string()), ("x", pa.float32())]))),
    ("score", pa.nulls(1)),
])
def test_encodings_of_the_same_logical_type_are_accepted(name: str, array: pa.Array) -> None:
    out = conform(pa.table({name: array}), [name])
    assert out.schema.field(name).type == field(name).type
    assert out.column(name).to_pylist() == pa.chunked_array([array]).cast(field(name).type).to_pylist()


def test_an_undeclared_struct_child_is_refused() -> None:
    point = pa.array([{"x": 1.0, "y": 2.0}], pa.struct([("x", pa.float32()), ("y", pa.float32())]))
    with pytest.raises(lakehold.ValidationError) as e:
        conform(pa.table({"point": point}), ["point"])
    assert reason(e) == "undeclared-column" and e.value.details["column"] == "point.y"


def test_a_missing_required_struct_child_is_refused_an_optional_one_filled() -> None:
    with pytest.raises(lakehold.ValidationError) as e:
        conform(pa.table({"point": pa.array([{"note": "a"}])}), ["point"])
    assert reason(e) == "missing-column" and e.value.details["column"] == "point.x"
    out = conform(pa.table({"point": pa.array([{"x": 1.0}], pa.struct([("x", pa.float32())]))}), ["point"])
    assert out.column("point").to_pylist() == [{"x": 1.0, "note": None}]


@pytest.mark.parametrize("name,array,want", [
    ("id", pa.array([1, -2], pa.int32()), [1, -2]),
    ("id", pa.array([2**32 - 1], pa.uint32()), [2**32 - 1]),
    ("n", pa.array([7], pa.int16()), [7]),
    ("score", pa.array([0.5], pa.float32()), [0.5]),
    ("price", pa.array([decimal.Decimal("1.5")], pa.decimal128(5, 1)), [decimal.Decimal("1.50")]),
    ("ts", pa.array([dt.datetime(2026, 1, 1)], pa.timestamp("ms")), [dt.datetime(2026, 1, 1)]),
])
def test_safe_cast_allows_lossless_widening(name: str, array: pa.Array, want: list[Any]) -> None:
    with pytest.raises(lakehold.ValidationError) as e:
        conform(pa.table({name: array}), [name])
    assert reason(e) == "type-mismatch" and 'cast="safe"' in e.value.message, "exact mode names the opt-in"
    out = conform(pa.table({name: array}), [name], cast="safe")
    assert out.schema.field(name).type == field(name).type and out.column(name).to_pylist() == want


@pytest.mark.parametrize("name,array", [
    ("score", pa.array(["1.5"])),
    ("id", pa.array([1.0, 2.0])),
    ("n", pa.array([1], pa.int64())),
    ("id", pa.array([1], pa.uint64())),
    ("score", pa.array([1], pa.int32())),
    ("price", pa.array([decimal.Decimal("1.125")], pa.decimal128(10, 3))),
    ("ts", pa.array([dt.datetime(2026, 1, 1)], pa.timestamp("ns"))),
])
def test_safe_cast_never_narrows_or_parses(name: str, array: pa.Array) -> None:
    with pytest.raises(lakehold.ValidationError) as e:
        conform(pa.table({name: array}), [name], cast="safe")
    assert reason(e) == "type-mismatch"


def test_safe_cast_out_of_range_is_refused() -> None:
    far = pa.array([2**62], pa.timestamp("s"))
    with pytest.raises(lakehold.ValidationError) as e:
        conform(pa.table({"ts": far}), ["ts"], cast="safe")
    assert reason(e) == "unsafe-cast"


def test_cast_mode_is_checked() -> None:
    assert _validate.cast_mode("safe") == "safe"
    with pytest.raises(lakehold.ValidationError) as e:
        _validate.cast_mode("unsafe")
    assert reason(e) == "invalid-cast-mode"


# --- required fields ------------------------------------------------------------------

@pytest.mark.parametrize("name,array,path", [
    ("id", pa.array([1, None], pa.int64()), "id"),
    ("tags", pa.array([["a", None]], pa.list_(pa.string())), "tags.element"),
    ("point", pa.array([{"x": None, "note": "a"}], pa.struct([("x", pa.float32()), ("note", pa.string())])),
     "point.x"),
    ("props", pa.array([[("k", None)]], pa.map_(pa.string(), pa.int32())), "props.value"),
])
def test_nulls_in_required_fields_are_refused_at_every_level(name: str, array: pa.Array, path: str) -> None:
    with pytest.raises(lakehold.ValidationError) as e:
        conform(pa.table({name: array}), [name])
    assert reason(e) == "null-in-required-field" and e.value.details["column"] == path


def test_required_children_of_absent_parents_may_be_null() -> None:
    # A null struct or list is fine in an optional column: its required
    # children are only required where it is present.
    point = pa.StructArray.from_arrays([pa.array([1.0, None], pa.float32()), pa.array(["a", None])],
                                       fields=[pa.field("x", pa.float32()), pa.field("note", pa.string())],
                                       mask=pa.array([False, True]))
    tags = pa.ListArray.from_arrays(pa.array([0, 1, 2], pa.int32()), pa.array(["a", None]),
                                    mask=pa.array([False, True]))
    props = pa.MapArray.from_arrays(pa.array([0, 1, 2], pa.int32()), pa.array(["k", "j"]),
                                    pa.array([1, None], pa.int32()), mask=pa.array([False, True]))
    out = conform(pa.table({"point": point, "tags": tags, "props": props}), ["point", "tags", "props"])
    assert out.column("point").to_pylist() == [{"x": 1.0, "note": "a"}, None]
    assert out.column("tags").to_pylist() == [["a"], None]
    assert out.column("props").to_pylist() == [[("k", 1)], None]
    # ... and the Parquet writer takes them (it refuses a null in a
    # required child even under a null parent).
    import io

    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(out, buf)
    assert pq.read_table(pa.BufferReader(buf.getvalue())).to_pylist() == out.to_pylist()


@pytest.mark.parametrize("iceberg", ["boolean", "int", "long", "float", "double", "date", "time", "timestamp",
                                     "timestamptz", "timestamp_ns", "string", "uuid", "binary", "decimal(4, 4)",
                                     "fixed[3]"])
def test_a_null_struct_with_a_required_child_of_any_type_is_written(iceberg: str) -> None:
    import io

    import pyarrow.parquet as pq

    f = _schema.to_arrow_field({"id": 1, "name": "s", "required": False, "type": {"type": "struct", "fields": [
        {"id": 2, "name": "c", "required": True, "type": iceberg}]}})
    child = f.type.field(0).type
    data = pa.table({"s": pa.array([None], pa.struct([pa.field("c", child)]))})
    out = _validate.conform(data, [f], "exact", what="data")
    buf = io.BytesIO()
    pq.write_table(out, buf)
    assert pq.read_table(pa.BufferReader(buf.getvalue())).column("s").to_pylist() == [None]


def test_nulls_can_be_left_to_the_caller_for_partial_writes() -> None:
    data = pa.table({"id": pa.array([1, None], pa.int64())})
    out = conform(data, ["id"], nulls=False)
    _validate.check_required(out.slice(0, 1), [field("id")])
    with pytest.raises(lakehold.ValidationError):
        _validate.check_required(out, [field("id")])


def test_column_file_schema_drops_required_but_checks_it() -> None:
    cf = pa.schema([pa.field("tags", pa.list_(pa.field("element", pa.string())), True, field("tags").metadata)])
    out = conform(pa.table({"tags": pa.array([["a"]])}), ["tags"], schema=cf)
    assert out.schema == cf
    with pytest.raises(lakehold.ValidationError) as e:
        conform(pa.table({"tags": pa.array([[None]], pa.list_(pa.string()))}), ["tags"], schema=cf)
    assert reason(e) == "null-in-required-field"


# --- merge keys, inputs ---------------------------------------------------------------

def test_merge_keys_must_have_the_key_type() -> None:
    for keys in (pa.array([1.0, 2.0]), pa.array([1.5]), pa.array(["1"])):
        for cast in ("exact", "safe"):
            with pytest.raises(lakehold.ValidationError) as e:
                _validate.merge_keys(keys, field("id"), cast)
            assert reason(e) == "key-type-mismatch", (keys.type, cast)
    with pytest.raises(lakehold.ValidationError):
        _validate.merge_keys(pa.array([1], pa.int32()), field("id"), "exact")
    got = _validate.merge_keys(pa.chunked_array([pa.array([1], pa.int32()), pa.array([2], pa.int32())]),
                               field("id"), "safe")
    assert got.type == pa.int64() and got.to_pylist() == [1, 2]


def test_inputs_that_are_not_tables_are_validation_errors() -> None:
    import pandas as pd

    with pytest.raises(lakehold.ValidationError) as e:
        _validate.to_arrow([1, 2])
    assert reason(e) == "not-tabular"
    with pytest.raises(lakehold.ValidationError) as e:
        _validate.to_arrow(pd.DataFrame({"a": [1, "x"]}))  # mixed object column: pyarrow refuses it
    assert reason(e) == "not-tabular"
    with pytest.raises(lakehold.ValidationError) as e:
        _validate.to_arrow({"a": [1], "b": [1, 2]})
    assert reason(e) == "not-tabular"


def test_row_counts() -> None:
    _validate.check_rows(3, 3, "x")
    with pytest.raises(lakehold.ValidationError) as e:
        _validate.check_rows(2, 3, "x")
    assert reason(e) == "row-count-mismatch"


def test_error_classes_are_importable_from_the_package() -> None:
    from lakehold import errors

    for name in ("ValidationError", "MergeKeyError", "FilterError", "StitchError", "MisalignedError",
                 "NotChangedError", "DeletesError"):
        assert getattr(lakehold, name) is getattr(errors, name)
        assert issubclass(getattr(errors, name), lakehold.LakeholdError)
    assert issubclass(lakehold.MergeKeyError, lakehold.ValidationError)
    from lakehold._deletes import DeletesError
    from lakehold._expr import FilterError
    from lakehold._stitch import NotChangedError
    assert (DeletesError, FilterError, NotChangedError) == (errors.DeletesError, errors.FilterError,
                                                            errors.NotChangedError)
