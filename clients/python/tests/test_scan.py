"""Scans against a real catalog (SQLite + file://, Postgres + SeaweedFS S3):
select, filter (JSON and string), snapshot_id, row lineage, limit, count,
streaming; column files, renamed and added columns, deletion vectors,
equality deletes and a compacted file (materialized ``_row_id``)."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pytest
import readkit

import lakehold
from lakehold.scan import Scan

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string()), pa.field("score", pa.float64())])


def rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": ids, "name": [f"r{i}" for i in ids], "score": [i / 100 for i in ids]}, schema=SCHEMA)


@pytest.fixture
def table(catalog: lakehold.Catalog, namespace: str) -> lakehold.Table:
    return catalog.create_table((namespace, "t_" + uuid.uuid4().hex[:6]), SCHEMA)


def by_id(t: pa.Table) -> pa.Table:
    return t.sort_by("id")


def plain(t: pa.Table) -> pa.Table:
    """Rows without field metadata, to compare values."""
    return pa.Table.from_arrays(t.columns, names=t.column_names)


def test_empty_table_scans_to_no_rows(table: lakehold.Table) -> None:
    assert table.scan().to_arrow().num_rows == 0
    assert table.scan().count() == 0


def test_scan_select_filter_snapshot(table: lakehold.Table) -> None:
    readkit.append_file(table, rows(0, 50))
    first = table.current_snapshot_id
    readkit.append_file(table, rows(50, 50))
    got = table.scan().to_arrow()
    assert plain(by_id(got)).equals(plain(rows(0, 100)))
    assert got.schema.field("id").metadata[b"PARQUET:field_id"]
    sel = table.scan(row_filter={"type": "lt", "term": "score", "value": 0.1}, selected_fields=("name",)).to_arrow()
    assert sel.column_names == ["name"]  # score was read for the filter, then dropped
    assert sorted(sel.column("name").to_pylist()) == sorted(f"r{i}" for i in range(10))
    old = table.scan(snapshot_id=first).to_arrow()
    assert sorted(old.column("id").to_pylist()) == list(range(50))
    assert table.scan(limit=7).to_arrow().num_rows == 7
    assert table.scan().count() == 100
    assert table.scan(row_filter={"type": "gt-eq", "term": "id", "value": 95}).count() == 5


def test_string_filter(table: lakehold.Table) -> None:
    pytest.importorskip("pyiceberg", reason="string filters need PyIceberg's parser")
    readkit.append_file(table, rows(0, 20))
    got = table.scan(row_filter="id >= 5 and id < 8 or name = 'r19'").to_arrow()
    assert sorted(got.column("id").to_pylist()) == [5, 6, 7, 19]


def test_streaming_batches_per_task(table: lakehold.Table) -> None:
    for i in range(3):
        readkit.append_file(table, rows(i * 10, 10))
    reader = table.scan(selected_fields=("id",)).to_arrow_batch_reader()
    assert isinstance(reader, pa.RecordBatchReader) and reader.schema.names == ["id"]
    batches = list(reader)
    assert len(batches) >= 3 and sum(b.num_rows for b in batches) == 30
    assert isinstance(table.scan(), Scan)


def test_column_files_lineage_and_schema_evolution(table: lakehold.Table) -> None:
    base = readkit.append_file(table, rows(0, 10))
    before = table.scan(with_row_lineage=True).to_arrow()
    seq_before = set(before.column("_last_updated_sequence_number").to_pylist())
    readkit.column_file(table, base, pa.table({"score": [float(-i) for i in range(10)]}))
    got = by_id(table.scan(with_row_lineage=True).to_arrow())
    assert got.column("score").to_pylist() == [float(-i) for i in range(10)]
    assert got.column("_row_id").to_pylist() == before.sort_by("id").column("_row_id").to_pylist()
    # No lineage column in the update: every row changed (rule 3).
    after = set(got.column("_last_updated_sequence_number").to_pylist())
    assert len(after) == 1 and after != seq_before
    # Rename "name" and add a column: old files read by field id, the new field as nulls.
    sj = table.schema_json()
    fields = [dict(f, name="label") if f["name"] == "name" else f for f in sj["fields"]]
    new_id = max(f["id"] for f in fields) + 1
    fields.append({"id": new_id, "name": "extra", "required": False, "type": "int"})
    before_rename = table.current_snapshot_id
    readkit.update_schema(table, {"type": "struct", "schema-id": sj["schema-id"] + 1, "fields": fields})
    evolved = by_id(table.scan().to_arrow())
    assert evolved.column_names == ["id", "label", "score", "extra"]
    assert evolved.column("label").to_pylist() == [f"r{i}" for i in range(10)]
    assert evolved.column("extra").null_count == 10
    # Time travel reads with the snapshot's schema.
    assert table.scan(snapshot_id=before_rename).to_arrow().column_names == ["id", "name", "score"]
    # Naming a lineage column in the selection asks for row lineage.
    sel = table.scan(selected_fields=("label", "_row_id")).to_arrow()
    assert sel.column_names == ["label", "_row_id", "_last_updated_sequence_number"]


def test_deletion_vector_and_equality_deletes(table: lakehold.Table) -> None:
    base = readkit.append_file(table, rows(0, 10))
    readkit.append_file(table, rows(10, 10))
    readkit.deletion_vector(table, base, [0, 3, 9])
    got = table.scan(with_row_lineage=True).to_arrow()
    assert sorted(got.column("id").to_pylist()) == [i for i in range(20) if i not in (0, 3, 9)]
    assert table.scan().count() == 17
    readkit.equality_delete(table, pa.table({"id": [4, 15]}))
    got = table.scan(selected_fields=("name",)).to_arrow()
    assert sorted(got.column("name").to_pylist()) == sorted(f"r{i}" for i in range(20) if i not in (0, 3, 9, 4, 15))
    assert table.scan().count() == 15


def test_compacted_file_keeps_row_ids(table: lakehold.Table, catalog_bin: str, deployment) -> None:
    if reason := readkit.compact_skip_reason(deployment):
        pytest.skip(reason)
    base = readkit.append_file(table, rows(0, 10))
    readkit.column_file(table, base, pa.table({"score": [1.0] * 10}))
    readkit.deletion_vector(table, base, [2, 5])
    before = by_id(table.scan(with_row_lineage=True).to_arrow())
    table.refresh()
    ns, name = table.identifier
    readkit.set_properties(table, {"write.column-files.compact.max-retired-ratio": "0.01"})
    report = readkit.compact(catalog_bin, deployment, f"{ns}.{name}")
    assert report["folds"] and "error" not in report["folds"][0], report
    table.refresh()
    after = by_id(table.scan(with_row_lineage=True).to_arrow())
    assert after.column("_row_id").to_pylist() == before.column("_row_id").to_pylist()
    assert plain(after.drop_columns(["_last_updated_sequence_number"])).equals(
        plain(before.drop_columns(["_last_updated_sequence_number"])))
    assert pc.all(pc.is_valid(after.column("_last_updated_sequence_number"))).as_py()


def test_scan_follows_plan_tasks(catalog_bin: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A plan over more files than the catalog answers inline comes back as
    plan tasks; the scan fetches every one (here 2 tasks inline, 7 files)."""
    from conftest import start_catalog, stop_catalog

    wh = tmp_path / "warehouse"
    wh.mkdir()
    r = start_catalog(catalog_bin, tmp_path, warehouse_dir=wh, extra_args=["--max-plan-tasks", "2"])
    try:
        cat = lakehold.load_catalog("tasks", uri=r.uri, warehouse=r.warehouse)
        cat.create_namespace("pt")
        t = cat.create_table("pt.t", pa.schema([pa.field("id", pa.int64(), nullable=False)]))
        for i in range(7):
            t.append(pa.table({"id": pa.array([10 * i, 10 * i + 1], pa.int64())}))
        t = cat.load_table("pt.t")
        plan = t._rest.request("POST", f"{t._path}/plan", json={})
        assert len(plan.get("file-scan-tasks") or []) <= 2 and plan.get("plan-tasks"), plan
        got = t.scan().to_arrow().sort_by("id").column("id").to_pylist()
        assert got == sorted([10 * i + j for i in range(7) for j in (0, 1)])
    finally:
        stop_catalog(r)
