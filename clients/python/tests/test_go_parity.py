"""The library reads what the Go stitch reader reads: on one shared table
(two appends, column updates with and without a lineage column, deletion
vectors, a compaction, then a column update of a compacted file and a third
append), ``Table.scan`` and ``catalog read --format arrow`` (package
clients/go/stitch) return the same rows, row for row by ``_row_id``: all
columns, a select with a filter, and time travel to before the compaction."""

from __future__ import annotations

import json
import subprocess
import uuid
from typing import Any

import pyarrow as pa
import pytest
import readkit

import lakehold

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string()), pa.field("score", pa.float64())])


def rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": ids, "name": [f"r{i}" for i in ids], "score": [i / 10 for i in ids]}, schema=SCHEMA)


def _has_read(catalog_bin: str) -> bool:
    res = subprocess.run([catalog_bin, "read", "--help"], capture_output=True, text=True, check=False)
    return res.returncode == 0 and "NAMESPACE.TABLE" in (res.stdout + res.stderr)


@pytest.fixture
def shared(catalog: lakehold.Catalog, namespace: str, catalog_bin: str, deployment: Any) -> dict[str, Any]:
    if not _has_read(catalog_bin):
        pytest.skip("catalog read not available in this catalog binary")
    if reason := readkit.compact_skip_reason(deployment):
        pytest.skip(reason)
    t = catalog.create_table((namespace, "p_" + uuid.uuid4().hex[:6]), SCHEMA)
    a = readkit.append_file(t, rows(0, 20))
    b = readkit.append_file(t, rows(20, 20))
    seq = t.scan(with_row_lineage=True).to_arrow().column("_last_updated_sequence_number")[0].as_py()
    readkit.column_file(t, a, pa.table({"score": [float(-i) for i in range(20)]}), lusn=[None] * 10 + [seq] * 10)
    readkit.column_file(t, b, pa.table({"name": [f"b{i}" for i in range(20)]}))
    readkit.deletion_vector(t, a, [1, 5, 19])
    before_compaction = t.current_snapshot_id
    readkit.set_properties(t, {"write.column-files.compact.max-retired-ratio": "0.01"})
    ns, name = t.identifier
    report = readkit.compact(catalog_bin, deployment, f"{ns}.{name}")
    assert len(report["folds"]) == 2 and not any("error" in f for f in report["folds"]), report
    t.refresh()
    c = readkit.append_file(t, rows(40, 10))
    compacted = [f for f in readkit.base_files(t) if f not in (a, b, c)]
    # A column update of a compacted file (its rows carry a stored _row_id).
    readkit.column_file(t, compacted[0], pa.table({"score": [7.0] * _rows_of(t, compacted[0])}))
    readkit.deletion_vector(t, c, [0])
    return {"table": t, "ident": f"{ns}.{name}", "before_compaction": before_compaction}


def _rows_of(t: lakehold.Table, base: str) -> int:
    return next(int(x["data-file"]["record-count"]) for x in t._plan({}) if x["data-file"]["file-path"] == base)


def go_read(catalog_bin: str, deployment: Any, ident: str, *args: str) -> pa.Table:
    out = subprocess.run([catalog_bin, "read", "--uri", deployment.uri, "--warehouse", deployment.warehouse,
                          "--format", "arrow", *args, ident], capture_output=True, check=False)
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-2000:]
    return pa.ipc.open_stream(out.stdout).read_all()


def same(mine: pa.Table, go: pa.Table) -> None:
    assert mine.column_names == go.column_names
    go = go.cast(pa.schema([pa.field(f.name, mine.schema.field(f.name).type) for f in go.schema]))
    assert mine.num_rows == go.num_rows
    assert _plain(mine).to_pylist() == _plain(go).to_pylist()


def _plain(t: pa.Table) -> pa.Table:
    return pa.Table.from_arrays(t.columns, names=t.column_names).sort_by("_row_id")


def test_all_columns_with_lineage(shared: dict[str, Any], catalog_bin: str, deployment: Any) -> None:
    mine = shared["table"].scan(with_row_lineage=True).to_arrow()
    assert mine.num_rows == 20 - 3 + 20 + 10 - 1
    same(mine, go_read(catalog_bin, deployment, shared["ident"], "--row-lineage"))


def test_select_and_filter(shared: dict[str, Any], catalog_bin: str, deployment: Any) -> None:
    flt = {"type": "or", "left": {"type": "lt", "term": "score", "value": -3.5},
           "right": {"type": "gt-eq", "term": "id", "value": 45}}
    mine = shared["table"].scan(row_filter=flt, selected_fields=("name",), with_row_lineage=True).to_arrow()
    assert 0 < mine.num_rows < 40
    same(mine, go_read(catalog_bin, deployment, shared["ident"], "--row-lineage", "--select", "name",
                       "--filter", json.dumps(flt)))


def test_snapshot_before_compaction(shared: dict[str, Any], catalog_bin: str, deployment: Any) -> None:
    snap = shared["before_compaction"]
    mine = shared["table"].scan(snapshot_id=snap, with_row_lineage=True).to_arrow()
    assert mine.num_rows == 37
    same(mine, go_read(catalog_bin, deployment, shared["ident"], "--row-lineage", "--snapshot-id", str(snap)))
