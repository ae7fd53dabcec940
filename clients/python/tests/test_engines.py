"""DuckDB, Polars and pandas read a stitched scan (column file and deletion
vector applied) through Arrow, with the same rows the Arrow result has."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest
import readkit

import lakehold

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("region", pa.string()), pa.field("score", pa.float64())])


@pytest.fixture
def scan(catalog: lakehold.Catalog, namespace: str) -> lakehold.Scan:
    t = catalog.create_table((namespace, "e_" + uuid.uuid4().hex[:6]), SCHEMA)
    base = readkit.append_file(t, pa.table({"id": list(range(8)), "region": ["eu", "us"] * 4, "score": [0.0] * 8},
                                           schema=SCHEMA))
    readkit.column_file(t, base, pa.table({"score": [float(i) for i in range(8)]}))
    readkit.deletion_vector(t, base, [7])
    return t.scan(with_row_lineage=True)


def test_duckdb(scan: lakehold.Scan) -> None:
    duckdb = pytest.importorskip("duckdb")
    con = scan.to_duckdb("scores")
    got = con.execute("SELECT region, sum(score), count(*) FROM scores GROUP BY region ORDER BY region").fetchall()
    assert got == [("eu", 0.0 + 2 + 4 + 6, 4), ("us", 1.0 + 3 + 5, 3)]
    # The same connection can join a stream without materializing it.
    mine = duckdb.connect()
    reader = scan.to_arrow_batch_reader()  # noqa: F841 (DuckDB finds it by its name)
    assert mine.execute("SELECT max(_row_id) - min(_row_id) FROM reader").fetchone() == (6,)


def test_polars(scan: lakehold.Scan) -> None:
    pl = pytest.importorskip("polars")
    df = scan.to_polars()
    assert isinstance(df, pl.DataFrame)
    assert df.filter(pl.col("region") == "us")["score"].sum() == 9.0
    assert df.columns == ["id", "region", "score", "_row_id", "_last_updated_sequence_number"]


def test_pandas(scan: lakehold.Scan) -> None:
    pytest.importorskip("pandas")
    df = scan.to_pandas()
    assert len(df) == 7
    assert df.sort_values("id")["score"].tolist() == [float(i) for i in range(7)]
    assert df.groupby("region")["id"].count().to_dict() == {"eu": 4, "us": 3}
