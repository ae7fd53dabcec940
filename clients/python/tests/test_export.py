"""The way back from v4: ``Table.export`` copies a v4 table's current
snapshot into a new format 3 (or 2) table. PyIceberg, which cannot read
the v4 table, reads the export row for row equal to the library's scan
of the source, through the catalog with vended credentials; the export
keeps the rows' ids in its files' first_row_id."""

from __future__ import annotations

import uuid
from typing import Any

import pyarrow as pa
import pytest
import readkit

import lakehold
from lakehold.errors import ValidationError

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.string()),
                    pa.field("score", pa.float64())])


@pytest.fixture
def source(catalog: lakehold.Catalog, namespace: str) -> lakehold.Table:
    """Two appends, a column update over both files, a deleted row."""
    t = catalog.create_table((namespace, "src_" + uuid.uuid4().hex[:6]), SCHEMA)
    t.append(pa.table({"id": list(range(10)), "region": ["eu", "us"] * 5, "score": [0.0] * 10}, schema=SCHEMA))
    t.append(pa.table({"id": list(range(10, 15)), "region": ["eu"] * 5, "score": [1.0] * 5}, schema=SCHEMA))
    t.merge_columns(pa.table({"id": [1, 3, 12], "score": [9.0, 8.0, 7.0]}), key="id")
    first = sorted(readkit.base_files(t))[0]
    readkit.deletion_vector(t, first, [0])
    return t


def pyiceberg_rows(deployment: Any, identifier: str) -> pa.Table:
    """The table as PyIceberg reads it through the catalog, with the
    credentials the catalog vends."""
    from pyiceberg.catalog.rest import RestCatalog

    cat = RestCatalog("export", uri=deployment.uri, warehouse=deployment.warehouse,
                      **{"header.X-Iceberg-Access-Delegation": "vended-credentials"})
    return cat.load_table(identifier).scan().to_arrow()


def test_refused_while_column_files_are_pending(catalog: lakehold.Catalog, source: lakehold.Table,
                                                namespace: str) -> None:
    with pytest.raises(ValidationError) as e:
        source.export((namespace, "back"))
    assert e.value.reason == "column-files-pending"
    assert e.value.details["count"] == 2
    assert source.location not in str(e.value), "files are named relative to the table"
    assert not catalog.table_exists((namespace, "back"))


@pytest.mark.parametrize("version", [3, 2])
def test_export_reads_back_equal(deployment: Any, catalog: lakehold.Catalog, source: lakehold.Table,
                                 namespace: str, version: int) -> None:
    want = source.scan(with_row_lineage=True).to_arrow().sort_by("id")
    assert want.num_rows == 14
    before = source.refresh().current_snapshot_id
    back = source.export(f"{namespace}.back{version}", format_version=version, compact=True)
    assert source.refresh().current_snapshot_id == before, "the fold went into the new table, not the source"
    assert back.format_version == version
    assert back.location != source.location
    assert source.scan(with_row_lineage=True).to_arrow().sort_by("id").equals(want), "the source reads as before"

    got = pyiceberg_rows(deployment, f"{namespace}.back{version}").sort_by("id")
    assert got.select(["id", "region", "score"]).to_pylist() == want.select(["id", "region", "score"]).to_pylist()

    if version == 3:
        # The appends numbered their rows 0-9 and 10-14, as their ids, and
        # each exported file keeps its first_row_id.
        assert want.column("_row_id").to_pylist() == want.column("id").to_pylist()
        plan = back._rest.request("POST", f"{back._path}/plan", json={})
        starts = sorted(t["data-file"]["first-row-id"] for t in plan["file-scan-tasks"])
        assert starts == [0, 10]
        assert back.metadata["next-row-id"] >= source.metadata["next-row-id"]


def test_worker_state_holds_no_catalog_secret() -> None:
    """What lakehold.spark ships to executors keeps the storage settings
    and drops the catalog session's credential and token."""
    from lakehold._io import FileIO
    from lakehold.table import Table

    t = Table.__new__(Table)
    t.identifier, t.metadata = ("ns", "t"), {"location": "s3://b/t"}
    t._io = FileIO({"credential": "id:secret", "token": "tok", "header.X-Api": "k", "uri": "http://c",
                    "s3.endpoint": "http://s3", "client.region": "eu"},
                   [{"prefix": "s3://b/t", "config": {"s3.session-token": "vended"}}], "s3://b/t")
    props, creds, loc = t._worker_state()["io"]
    assert props == {"s3.endpoint": "http://s3", "client.region": "eu"}
    assert creds[0]["config"] == {"s3.session-token": "vended"}
    assert Table._for_worker(t._worker_state())._io.resolve("data/x") == "s3://b/t/data/x"
