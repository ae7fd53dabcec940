"""Files written without field ids on a table with
``schema.name-mapping.default`` (docs/column-files.md, "Routes"): the
catalog's ``/files`` route takes them and derives their stats by name, and
both readers resolve their columns through the mapping as the Iceberg spec
says (aliases in ``names``, nested fields, a list's ``element``, a map's
``key`` and ``value``): ``Table.scan`` and
``catalog read --format arrow`` return the real values, before and after a
column update (``Table.merge_columns``) of the file, and after a
compaction (``catalog compact``) folds it into a file with field ids."""

from __future__ import annotations

import json
import subprocess
import uuid
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import readkit

import lakehold

SCHEMA = pa.schema([
    pa.field("id", pa.int64()), pa.field("name", pa.string()), pa.field("score", pa.float64()),
    pa.field("point", pa.struct([pa.field("x", pa.float64()), pa.field("y", pa.float64())])),
    pa.field("tags", pa.list_(pa.string())), pa.field("attrs", pa.map_(pa.string(), pa.int64())),
])

# What a writer without field ids wrote: other names for three fields (the
# mapping lists them as aliases). (The /files route refuses a column the
# mapping leaves out, so none is here.)
FILE_ROWS = pa.table({
    "id": pa.array([1, 2, 3], pa.int64()),
    "label": ["a", "b", None],
    "score": [0.5, None, 2.5],
    "pt": pa.array([{"x": 1.0, "why": 2.0}, None, {"x": 5.0, "why": None}],
                   pa.struct([pa.field("x", pa.float64()), pa.field("why", pa.float64())])),
    "tags": [["t1", "t2"], [], None],
    "attrs": pa.array([[("k", 1)], [], None], pa.map_(pa.string(), pa.int64())),
})

EXPECTED = [
    {"id": 1, "name": "a", "score": 0.5, "point": {"x": 1.0, "y": 2.0}, "tags": ["t1", "t2"], "attrs": [("k", 1)]},
    {"id": 2, "name": "b", "score": None, "point": None, "tags": [], "attrs": []},
    {"id": 3, "name": None, "score": 2.5, "point": {"x": 5.0, "y": None}, "tags": None, "attrs": None},
]


def mapping(schema_json: dict[str, Any]) -> list[dict[str, Any]]:
    """The table's name mapping, with the file's aliases added."""
    alias = {"name": "label", "point": "pt", "y": "why"}

    def fields(t: Any) -> list[dict[str, Any]]:
        if not isinstance(t, dict):
            return []
        if t["type"] == "struct":
            return [{"field-id": f["id"], "names": [f["name"]] + ([alias[f["name"]]] if f["name"] in alias else []),
                     "fields": fields(f["type"])} for f in t["fields"]]
        if t["type"] == "list":
            return [{"field-id": t["element-id"], "names": ["element"], "fields": fields(t["element"])}]
        if t["type"] == "map":
            return [{"field-id": t["key-id"], "names": ["key"], "fields": fields(t["key"])},
                    {"field-id": t["value-id"], "names": ["value"], "fields": fields(t["value"])}]
        return []

    return fields(schema_json)


def _has_read(catalog_bin: str) -> bool:
    res = subprocess.run([catalog_bin, "read", "--help"], capture_output=True, text=True, check=False)
    return res.returncode == 0 and "NAMESPACE.TABLE" in (res.stdout + res.stderr)


def go_read(catalog_bin: str, deployment: Any, ident: str) -> pa.Table:
    out = subprocess.run([catalog_bin, "read", "--uri", deployment.uri, "--warehouse", deployment.warehouse,
                          "--format", "arrow", ident], capture_output=True, check=False)
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-2000:]
    return pa.ipc.open_stream(out.stdout).read_all()


def values(t: pa.Table) -> list[dict[str, Any]]:
    return pa.Table.from_arrays(t.columns, names=t.column_names).sort_by("id").to_pylist()


@pytest.fixture
def mapped(catalog: lakehold.Catalog, namespace: str) -> lakehold.Table:
    t = catalog.create_table((namespace, "nm_" + uuid.uuid4().hex[:6]), SCHEMA)
    readkit.set_properties(t, {"schema.name-mapping.default": json.dumps(mapping(t.schema_json()))})
    data = FILE_ROWS
    loc = f"{t.location}/data/nm-{uuid.uuid4().hex[:8]}.parquet"
    with t._io.open_output(loc) as out:
        pq.write_table(data, out)
    with t._io.open_input(loc) as f:
        assert all(fl.metadata is None for fl in pq.ParquetFile(f).schema_arrow), "the file must carry no field ids"
    readkit._files(t, {"add-data-files": [{"location": loc, "file-format": "parquet", "record-count": 3,
                                           "file-size-in-bytes": t._io.size(loc), "spec-id": 0}]})
    return t


def test_name_mapped_file_reads_its_values(mapped: lakehold.Table, catalog_bin: str, deployment: Any) -> None:
    assert values(mapped.scan().to_arrow()) == EXPECTED
    # Pruning works off the stats the server derived through the mapping.
    assert values(mapped.scan(row_filter="score > 1").to_arrow()) == EXPECTED[2:]
    if not _has_read(catalog_bin):
        pytest.skip("catalog read not available in this catalog binary")
    ns, name = mapped.identifier
    assert values(go_read(catalog_bin, deployment, f"{ns}.{name}")) == EXPECTED


def test_column_update_of_name_mapped_file(mapped: lakehold.Table, catalog_bin: str, deployment: Any) -> None:
    mapped.merge_columns(pa.table({"id": pa.array([3], pa.int64()), "score": [9.0]}), key="id")
    mapped.refresh()
    want = [dict(r) for r in EXPECTED]
    want[2]["score"] = 9.0
    assert values(mapped.scan().to_arrow()) == want
    # A second update reads its inputs (the key, the other rows' values)
    # from the name-mapped base through the mapping too.
    mapped.merge_columns(pa.table({"id": pa.array([1], pa.int64()), "name": ["z"]}), key="id")
    mapped.refresh()
    want[0]["name"] = "z"
    assert values(mapped.scan().to_arrow()) == want
    if not _has_read(catalog_bin):
        pytest.skip("catalog read not available in this catalog binary")
    ns, name = mapped.identifier
    assert values(go_read(catalog_bin, deployment, f"{ns}.{name}")) == want
    # Compaction folds the name-mapped base and its column files into one
    # file with field ids, losing no column.
    if reason := readkit.compact_skip_reason(deployment):
        pytest.skip(reason)
    before = readkit.base_files(mapped)
    readkit.set_properties(mapped, {"write.column-files.compact.max-retired-ratio": "0.01"})
    report = readkit.compact(catalog_bin, deployment, f"{ns}.{name}")
    assert len(report["folds"]) == 1 and not any("error" in f for f in report["folds"]), report
    mapped.refresh()
    (folded,) = readkit.base_files(mapped)
    assert folded not in before
    with mapped._io.open_input(folded) as f:
        assert all(fl.metadata and b"PARQUET:field_id" in fl.metadata for fl in pq.ParquetFile(f).schema_arrow)
    assert values(mapped.scan().to_arrow()) == want
    assert values(go_read(catalog_bin, deployment, f"{ns}.{name}")) == want
