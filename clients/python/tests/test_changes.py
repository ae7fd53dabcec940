"""Incremental "what changed since snapshot S" scans against a real catalog
(docs/column-files.md, "Change detection"): appended files come whole,
updated bases only with their changed rows (by
``_last_updated_sequence_number``), unchanged columns refused."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pytest
import readkit

import lakehold

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string()), pa.field("score", pa.float64())])


def rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": ids, "name": [f"r{i}" for i in ids], "score": [0.0] * n}, schema=SCHEMA)


@pytest.fixture
def history(catalog: lakehold.Catalog, namespace: str) -> tuple[lakehold.Table, list[int]]:
    """Snapshots: append A (ids 0-9); update score of A's rows 0-4 only
    (lineage column: null = changed now, the old value carried for the
    others); append B (ids 10-14); update name of all of A (no lineage)."""
    t = catalog.create_table((namespace, "c_" + uuid.uuid4().hex[:6]), SCHEMA)
    a = readkit.append_file(t, rows(0, 10))
    snaps = [t.current_snapshot_id]
    seq_a = t.scan(with_row_lineage=True).to_arrow().column("_last_updated_sequence_number")[0].as_py()
    readkit.column_file(t, a, pa.table({"score": [1.0] * 5 + [0.0] * 5}), lusn=[None] * 5 + [seq_a] * 5)
    snaps.append(t.current_snapshot_id)
    readkit.append_file(t, rows(10, 5))
    snaps.append(t.current_snapshot_id)
    readkit.column_file(t, a, pa.table({"name": [f"n{i}" for i in range(10)]}))
    snaps.append(t.current_snapshot_id)
    return t, snaps


def _ids(scan: lakehold.Scan) -> list[int]:
    return sorted(scan.to_arrow().column("_row_id").to_pylist())


def test_changed_rows_and_appends(history: tuple[lakehold.Table, list[int]]) -> None:
    t, (s1, s2, s3, _) = history
    first = t.scan(with_row_lineage=True).to_arrow()
    row_id = dict(zip(first.column("id").to_pylist(), first.column("_row_id").to_pylist()))
    got = t.changes(s1, s3, selected_fields=("score",)).to_arrow()
    assert got.column_names == ["score", "_row_id", "_last_updated_sequence_number"]
    assert sorted(got.column("_row_id").to_pylist()) == sorted(row_id[i] for i in list(range(5)) + list(range(10, 15)))
    assert _ids(t.changes(s1, s2, selected_fields=("score",))) == sorted(row_id[i] for i in range(5))
    assert _ids(t.changes(s2, s3, selected_fields=("score",))) == sorted(row_id[i] for i in range(10, 15))


def test_update_without_lineage_changes_every_row(history: tuple[lakehold.Table, list[int]]) -> None:
    t, (_, _, s3, s4) = history
    got = t.changes(s3, s4, selected_fields=("name",)).to_arrow()
    assert sorted(got.column("name").to_pylist()) == sorted(f"n{i}" for i in range(10))


def test_defaults_give_whole_changed_rows(history: tuple[lakehold.Table, list[int]]) -> None:
    """With its defaults a change scan returns every column of the changed
    rows as of the end snapshot (unchanged columns read from it), and the
    appended rows; nothing is refused."""
    t, (s1, s2, s3, s4) = history
    got = t.changes(s1, s3).to_arrow().sort_by("id")
    assert got.column_names == ["id", "name", "score", "_row_id", "_last_updated_sequence_number"]
    want_ids = list(range(5)) + list(range(10, 15))
    assert got.column("id").to_pylist() == want_ids
    assert got.column("name").to_pylist() == [f"r{i}" for i in want_ids]
    assert got.column("score").to_pylist() == [1.0] * 5 + [0.0] * 5
    # The name update (no lineage) changed every row of A: the score each
    # row has at s4 comes with it.
    got = t.changes(s3, s4).to_arrow().sort_by("id")
    assert got.column("id").to_pylist() == list(range(10))
    assert got.column("name").to_pylist() == [f"n{i}" for i in range(10)]
    assert got.column("score").to_pylist() == [1.0] * 5 + [0.0] * 5
    assert t.changes(s1, s2).count() == 5


def test_selected_fields_project_never_drop(history: tuple[lakehold.Table, list[int]]) -> None:
    """Selecting a column the update did not change still returns every
    changed row (it used to return none), and mixing changed and unchanged
    columns is no longer refused."""
    t, (s1, s2, s3, _) = history
    first = t.scan(with_row_lineage=True).to_arrow()
    row_id = dict(zip(first.column("id").to_pylist(), first.column("_row_id").to_pylist()))
    got = t.changes(s1, s2, selected_fields=("id",)).to_arrow()
    assert got.column_names == ["id", "_row_id", "_last_updated_sequence_number"]
    assert sorted(got.column("id").to_pylist()) == list(range(5))
    assert sorted(got.column("_row_id").to_pylist()) == sorted(row_id[i] for i in range(5))
    both = t.changes(s1, s3, selected_fields=("score", "id")).to_arrow().sort_by("id")
    assert both.column("id").to_pylist() == list(range(5)) + list(range(10, 15))
    assert both.column("score").to_pylist() == [1.0] * 5 + [0.0] * 5


def test_count_of_changes(history: tuple[lakehold.Table, list[int]]) -> None:
    t, (s1, _, s3, _) = history
    assert t.changes(s1, s3, selected_fields=("score",)).count() == 10


def test_library_writes_read_back_and_change(catalog: lakehold.Catalog, namespace: str) -> None:
    """The library's own writers, then its reader: append, update_columns
    (every row), merge_columns (two rows): the scan shows the merged values,
    and the change scan since the update returns exactly the merged rows."""
    t = catalog.create_table((namespace, "w_" + uuid.uuid4().hex[:6]), SCHEMA)
    t.append(rows(0, 10))
    t.refresh()
    t.update_columns(lambda b: pa.table({"score": pc.multiply(b.column("id"), 2.0)}), inputs=["id"],
                     outputs=["score"])
    t.refresh()
    after_update = t.current_snapshot_id
    t.merge_columns(pa.table({"id": [3, 7], "score": [-1.0, -2.0]}), key="id")
    t.refresh()
    got = t.scan(selected_fields=("id", "score")).to_arrow().sort_by("id")
    want = [-1.0 if i == 3 else -2.0 if i == 7 else 2.0 * i for i in range(10)]
    assert got.column("score").to_pylist() == want
    changed = t.changes(after_update, selected_fields=("score",)).to_arrow()
    assert sorted(changed.column("score").to_pylist()) == [-2.0, -1.0]


def test_merge_of_every_row_writes_no_lineage(catalog: lakehold.Catalog, namespace: str) -> None:
    """merge_columns matching every row of a base writes the new values
    alone (no lineage column, nothing current read), and the change scan
    still reports every row; a later partial merge of the same base carries
    the others' lineage again."""
    import pyarrow.parquet as pq

    t = catalog.create_table((namespace, "m_" + uuid.uuid4().hex[:6]), SCHEMA)
    t.append(rows(0, 10))
    t.refresh()
    before = t.current_snapshot_id
    t.merge_columns(pa.table({"id": list(range(10)), "score": [float(i) for i in range(10)]}), key="id")
    t.refresh()
    (task,) = t._plan({})
    (cf,) = task["data-file"]["column-files"]
    with t._io.open_input(cf["location"]) as f:
        assert pq.ParquetFile(f).schema_arrow.names == ["score"]
    changed = t.changes(before, selected_fields=("score",)).to_arrow()
    assert sorted(changed.column("score").to_pylist()) == [float(i) for i in range(10)]

    after = t.current_snapshot_id
    t.merge_columns(pa.table({"id": [4], "score": [-4.0]}), key="id")
    t.refresh()
    (task,) = t._plan({})
    (cf,) = task["data-file"]["column-files"]
    with t._io.open_input(cf["location"]) as f:
        assert pq.ParquetFile(f).schema_arrow.names == ["score", "_last_updated_sequence_number"]
    assert t.changes(after, selected_fields=("score",)).to_arrow().column("score").to_pylist() == [-4.0]
    got = t.scan(selected_fields=("id", "score")).to_arrow().sort_by("id").column("score").to_pylist()
    assert got == [-4.0 if i == 4 else float(i) for i in range(10)]
