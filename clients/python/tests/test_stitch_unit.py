"""Stitching and filters as pure functions, on Parquet files written here:
field-id matching (renames), fields an old base lacks, deletion vectors,
equality deletes, the row-lineage rules of docs/column-files.md, change
tasks, and the filter's JSON and Arrow forms."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from lakehold import _expr
from lakehold._deletes import write_puffin
from lakehold._stitch import MisalignedError, NotChangedError, StitchError, read_task

LUSN = 2147483539
ROW_ID = 2147483540


class LocalIO:
    """The part of FileIO the reader uses, on the local file system."""

    fs = pafs.LocalFileSystem()

    def open_input(self, location: str) -> pa.NativeFile:
        return self.fs.open_input_file(location.removeprefix("file://"))


def fld(name: str, typ: pa.DataType, fid: int) -> pa.Field:
    return pa.field(name, typ, metadata={b"PARQUET:field_id": str(fid).encode()})


SCHEMA = pa.schema([fld("id", pa.int64(), 1), fld("name", pa.string(), 2), fld("score", pa.float64(), 3),
                    fld("added", pa.int32(), 4)])


def write(path: Path, cols: dict[tuple[str, int], tuple[list[Any], pa.DataType]]) -> str:
    schema = pa.schema([fld(n, t, i) for (n, i), (_, t) in cols.items()])
    pq.write_table(pa.table([pa.array(v, t) for v, t in cols.values()], schema=schema), path)
    return str(path)


@pytest.fixture
def base(tmp_path: Path) -> str:
    # Written before field 2 was renamed (it was "nm") and before field 4 existed.
    return write(tmp_path / "base.parquet", {("id", 1): (list(range(10)), pa.int64()),
                                             ("nm", 2): ([f"n{i}" for i in range(10)], pa.string()),
                                             ("score", 3): ([0.0] * 10, pa.float64())})


def task(base: str, **df: Any) -> dict[str, Any]:
    deletes = df.pop("deletes", [])
    return {"data-file": {"file-path": base, "record-count": 10, "first-row-id": 100, "data-sequence-number": 4, **df},
            "delete-files": deletes}


def test_base_only_renamed_and_new_fields(base: str) -> None:
    t = read_task(LocalIO(), task(base), ["name", "added", "id"], schema=SCHEMA)
    assert t.column_names == ["name", "added", "id"]
    assert t.column("name").to_pylist() == [f"n{i}" for i in range(10)]
    assert t.column("added").null_count == 10 and t.schema.field("added").type == pa.int32()


def test_column_file_wins_and_lineage_rule_2(base: str, tmp_path: Path) -> None:
    cf = write(tmp_path / "cf.parquet", {("score", 3): ([i / 10 for i in range(10)], pa.float64()),
                                         ("_last_updated_sequence_number", LUSN): ([None, None] + [2] * 8, pa.int64())})
    t = read_task(LocalIO(), task(base, **{"column-files": [{"location": cf, "field-ids": [3, LUSN]}]}),
                  ["score"], with_row_lineage=True, schema=SCHEMA)
    assert t.column("score").to_pylist() == [i / 10 for i in range(10)]
    assert t.column("_row_id").to_pylist() == list(range(100, 110))
    assert t.column("_last_updated_sequence_number").to_pylist() == [4, 4] + [2] * 8


def test_lineage_rule_3_ignores_base_values(tmp_path: Path) -> None:
    b = write(tmp_path / "b.parquet", {("id", 1): (list(range(10)), pa.int64()),
                                       ("_last_updated_sequence_number", LUSN): ([1] * 10, pa.int64())})
    cf = write(tmp_path / "cf.parquet", {("score", 3): ([1.0] * 10, pa.float64())})
    updated = task(b, **{"column-files": [{"location": cf, "field-ids": [3]}]})
    assert read_task(LocalIO(), updated, ["id"], True, schema=SCHEMA).column(
        "_last_updated_sequence_number").to_pylist() == [4] * 10
    # Rule 1: no column files, the base's materialized values count.
    assert read_task(LocalIO(), task(b), ["id"], True, schema=SCHEMA).column(
        "_last_updated_sequence_number").to_pylist() == [1] * 10
    # The plan cut the column files (select), the entry still has some: rule 3.
    cut = task(b, **{"latest-column-file-snapshot-id": 7})
    assert read_task(LocalIO(), cut, ["id"], True, schema=SCHEMA).column(
        "_last_updated_sequence_number").to_pylist() == [4] * 10


def test_compacted_file_keeps_materialized_row_ids(tmp_path: Path) -> None:
    b = write(tmp_path / "c.parquet", {("id", 1): ([0, 2, 5], pa.int64()),
                                       ("_row_id", ROW_ID): ([100, 102, None], pa.int64())})
    t = read_task(LocalIO(), {"data-file": {"file-path": b, "record-count": 3, "first-row-id": 500,
                                            "data-sequence-number": 3}}, ["id"], True, schema=SCHEMA)
    assert t.column("_row_id").to_pylist() == [100, 102, 502]


def test_deletion_vector_and_equality_deletes(base: str, tmp_path: Path) -> None:
    with open(tmp_path / "dv.puffin", "wb") as f:
        dv = write_puffin(f, [(base, [1, 3])])[0]
    eq = write(tmp_path / "eq.parquet", {("id", 1): ([5, 42], pa.int64())})
    deletes = [{"content": "position-deletes", "file-path": str(tmp_path / "dv.puffin"), "file-format": "puffin",
                "record-count": 2, "content-offset": dv.offset, "content-size-in-bytes": dv.size_in_bytes},
               {"content": "equality-deletes", "file-path": eq, "file-format": "parquet", "equality-ids": [1],
                "record-count": 2}]
    t = read_task(LocalIO(), task(base, deletes=deletes), ["name"], True, schema=SCHEMA)
    assert t.column_names == ["name", "_row_id", "_last_updated_sequence_number"]  # id read for the delete, dropped
    assert t.column("_row_id").to_pylist() == [100, 102, 104, 106, 107, 108, 109]
    kept = read_task(LocalIO(), task(base, deletes=deletes), ["id"], keep_deleted_rows=True, schema=SCHEMA)
    assert kept.num_rows == 10


def test_misaligned_column_file_is_refused(base: str, tmp_path: Path) -> None:
    cf = write(tmp_path / "short.parquet", {("score", 3): ([1.0] * 9, pa.float64())})
    with pytest.raises(MisalignedError):
        read_task(LocalIO(), task(base, **{"column-files": [{"location": cf, "field-ids": [3]}]}), ["score"],
                  schema=SCHEMA)


def test_column_file_without_its_listed_field_is_refused(base: str, tmp_path: Path) -> None:
    cf = write(tmp_path / "other.parquet", {("id", 1): (list(range(10)), pa.int64())})
    with pytest.raises(StitchError, match="no column with that field id"):
        read_task(LocalIO(), task(base, **{"column-files": [{"location": cf, "field-ids": [3]}]}), ["score"],
                  schema=SCHEMA)


def test_change_task_reads_only_changed_columns(base: str, tmp_path: Path) -> None:
    cf = write(tmp_path / "cf.parquet", {("score", 3): ([1.0] * 10, pa.float64())})
    change = task(base, **{"column-files": [{"location": cf, "field-ids": [3], "sequence-number": 4}],
                           "column-files-changed-since": 1})
    assert read_task(LocalIO(), change, ["score"], True, schema=SCHEMA).num_rows == 10
    with pytest.raises(NotChangedError):
        read_task(LocalIO(), change, ["score", "name"], True, schema=SCHEMA)


def test_stale_lineage_column_is_ignored(base: str, tmp_path: Path) -> None:
    cf = write(tmp_path / "cf.parquet", {("_last_updated_sequence_number", LUSN): ([1] * 10, pa.int64())})
    t = task(base, **{"column-files": [{"location": cf, "field-ids": [LUSN], "sequence-number": 2}]})
    assert read_task(LocalIO(), t, ["id"], True, schema=SCHEMA).column(
        "_last_updated_sequence_number").to_pylist() == [4] * 10


def test_struct_children_matched_by_field_id(tmp_path: Path) -> None:
    old = pa.struct([fld("lat", pa.float64(), 11), fld("lon", pa.float64(), 12)])
    new = pa.struct([fld("longitude", pa.float64(), 12), fld("lat", pa.float64(), 11), fld("alt", pa.int64(), 13)])
    schema = pa.schema([fld("id", pa.int64(), 1), fld("pos", new, 10), fld("tags", pa.list_(fld("element", pa.string(), 21)), 20)])
    b = tmp_path / "s.parquet"
    file_schema = pa.schema([fld("id", pa.int64(), 1), fld("pos", old, 10), fld("tags", pa.list_(fld("element", pa.string(), 21)), 20)])
    pq.write_table(pa.table([pa.array([1, 2]), pa.array([{"lat": 1.0, "lon": 2.0}, None], old),
                             pa.array([["a"], []], pa.list_(pa.string()))], schema=file_schema), b)
    t = read_task(LocalIO(), {"data-file": {"file-path": str(b), "record-count": 2}}, ["pos", "tags"], schema=schema)
    assert t.column("pos").to_pylist() == [{"longitude": 2.0, "lat": 1.0, "alt": None}, None]
    assert t.column("tags").to_pylist() == [["a"], []]


def test_no_columns_counts_rows(base: str) -> None:
    assert read_task(LocalIO(), task(base), [], schema=SCHEMA).num_rows == 10


ROWS = pa.table({"id": [1, 2, 3, None], "name": ["ab", "b", None, "abc"], "score": [0.1, 0.9, float("nan"), 0.7]},
                schema=pa.schema([SCHEMA.field("id"), SCHEMA.field("name"), SCHEMA.field("score")]))


@pytest.mark.parametrize("expr, ids", [
    ({"type": "lt", "term": "id", "value": 3}, [1, 2]),
    ({"type": "not", "child": {"type": "lt", "term": "id", "value": 3}}, [3]),
    ({"type": "in", "term": "id", "values": [1, 3]}, [1, 3]),
    ({"type": "not-in", "term": "id", "values": [1]}, [2, 3]),
    ({"type": "is-null", "term": "id"}, [None]),
    ({"type": "starts-with", "term": "name", "value": "a"}, [1, None]),
    ({"type": "is-nan", "term": "score"}, [3]),
    ({"type": "or", "left": {"type": "eq", "term": "id", "value": 1},
      "right": {"type": "gt", "term": "score", "value": 0.8}}, [1, 2]),
    (True, [1, 2, 3, None]),
    (False, []),
])
def test_filter_on_rows(expr: Any, ids: list[Any]) -> None:
    pred = _expr.to_pyarrow(_expr.to_json(expr), ROWS.schema)
    got = ROWS if pred is None else ROWS.filter(pred)
    assert got.column("id").to_pylist() == ids


def test_filter_columns_and_errors() -> None:
    f = {"type": "and", "left": {"type": "lt", "term": "score", "value": 1}, "right": {"type": "not-null", "term": "id"}}
    assert _expr.referenced_names(f, SCHEMA) == ["id", "score"]
    with pytest.raises(_expr.FilterError, match="not in the table"):
        _expr.referenced_names({"type": "lt", "term": "nope", "value": 1}, SCHEMA)
    with pytest.raises(_expr.FilterError, match="unknown expression"):
        _expr.to_json({"type": "lessthan", "term": "id", "value": 1})
    with pytest.raises(_expr.FilterError, match="not a valid"):
        _expr.to_pyarrow({"type": "lt", "term": "id", "value": "x"}, SCHEMA)


def test_string_filter_through_pyiceberg_parser() -> None:
    pytest.importorskip("pyiceberg", reason="string filters need PyIceberg's parser")
    got = _expr.to_json("score > 0.5 and id in (1, 2) and not name is null", SCHEMA)
    assert got == {"type": "and", "left": {"type": "gt", "term": "score", "value": 0.5},
                   "right": {"type": "and", "left": {"type": "in", "term": "id", "values": [1, 2]},
                             "right": {"type": "not", "child": {"type": "is-null", "term": "name"}}}}
    assert ROWS.filter(_expr.to_pyarrow(got, ROWS.schema)).column("id").to_pylist() == [2]
    dates = pa.schema([fld("d", pa.date32(), 9)])
    d = _expr.to_json("d >= '2024-01-02'", dates)
    assert pa.table({"d": pa.array([19723, 19724], pa.date32())}, schema=dates).filter(
        _expr.to_pyarrow(d, dates)).num_rows == 1


def test_string_filter_without_pyiceberg_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pyiceberg.expressions.parser", None)
    with pytest.raises(_expr.FilterError, match="pip install pyiceberg"):
        _expr.to_json("id < 3")


# Name mapping (schema.name-mapping.default): files without field ids.

NM_SCHEMA = pa.schema([
    fld("id", pa.int64(), 1),
    fld("pts", pa.list_(fld("element", pa.struct([fld("x", pa.int64(), 5), fld("y", pa.string(), 6)]), 4)), 2),
    fld("m", pa.map_(fld("key", pa.string(), 7).with_nullable(False), fld("value", pa.struct([fld("z", pa.int64(), 9)]), 8)), 3),
])
NM = [{"field-id": 1, "names": ["id"]},
      {"field-id": 2, "names": ["pts", "points"], "fields": [{"field-id": 4, "names": ["element"], "fields": [
          {"field-id": 5, "names": ["x"]}, {"field-id": 6, "names": ["y", "why"]}]}]},
      {"field-id": 3, "names": ["m"], "fields": [{"field-id": 7, "names": ["key"]},
                                                  {"field-id": 8, "names": ["value"], "fields": [
                                                      {"field-id": 9, "names": ["z", "zed"]}]}]}]


def nm_file(tmp_path: Path) -> str:
    """Three rows without any field id: aliases inside a list's struct and
    a map value's struct, fields in another order, an unmapped column."""
    el = pa.struct([pa.field("why", pa.string()), pa.field("x", pa.int64())])
    data = pa.table({
        "junk": [7, 8, 9],
        "points": pa.array([[{"why": "a", "x": 1}, None], [], None], pa.list_(el)),
        "m": pa.array([[("k", {"zed": 5})], None, [("q", None)]], pa.map_(pa.string(), pa.struct([pa.field("zed", pa.int64())]))),
        "id": [1, 2, 3],
    })
    path = str(tmp_path / "nm.parquet")
    pq.write_table(data, path)
    assert all(f.metadata is None for f in pq.read_schema(path))
    return path


def nm_task(base: str) -> dict[str, Any]:
    return {"data-file": {"file-path": base, "record-count": 3}, "delete-files": []}


def test_name_mapping_resolves_columns_without_ids(tmp_path: Path) -> None:
    base = nm_file(tmp_path)
    got = read_task(LocalIO(), nm_task(base), ["id", "pts", "m"], schema=NM_SCHEMA, name_mapping=NM)
    assert got.schema.equals(NM_SCHEMA, check_metadata=True)
    assert got.to_pylist() == [
        {"id": 1, "pts": [{"x": 1, "y": "a"}, None], "m": [("k", {"z": 5})]},
        {"id": 2, "pts": [], "m": None},
        {"id": 3, "pts": None, "m": [("q", None)]},
    ]
    # Without the mapping no column has an id: refused, not read as nulls.
    with pytest.raises(StitchError, match="no column with a field id"):
        read_task(LocalIO(), nm_task(base), ["id"], schema=NM_SCHEMA)


def test_name_mapping_written_id_wins(tmp_path: Path) -> None:
    # "id" carries field id 3 and "other" carries 1: ids, not names, decide.
    path = str(tmp_path / "ids.parquet")
    pq.write_table(pa.table([pa.array([10, 20, 30]), pa.array([1, 2, 3])],
                            schema=pa.schema([fld("id", pa.int64(), 3), fld("other", pa.int64(), 1)])), path)
    got = read_task(LocalIO(), nm_task(path), ["id"], schema=NM_SCHEMA, name_mapping=NM)
    assert got.column("id").to_pylist() == [1, 2, 3]


def test_name_mapping_two_columns_one_id(tmp_path: Path) -> None:
    path = str(tmp_path / "two.parquet")
    pq.write_table(pa.table({"pts": pa.array([None], pa.list_(pa.int64())), "points": pa.array([None], pa.list_(pa.int64()))}), path)
    with pytest.raises(StitchError, match="two columns for field id 2"):
        read_task(LocalIO(), {"data-file": {"file-path": path, "record-count": 1}, "delete-files": []}, ["pts"],
                  schema=NM_SCHEMA, name_mapping=NM)
