"""DuckDB 1.5.5 with its iceberg extension: ATTACH the REST catalog,
create, insert, select."""
import glob
import importlib
import os

import duckdb
import pytest


def extension_file(name):
    """The extension binary shipped in the duckdb-extension-<name> wheel:
    nothing is downloaded at run time."""
    pkg = importlib.import_module(f"duckdb_extension_{name}")
    (path,) = glob.glob(os.path.join(os.path.dirname(pkg.__file__), "extensions", "*", f"{name}.duckdb_extension"))
    return path


@pytest.fixture
def con(catalog_uri, warehouse):
    c = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    for ext in ("avro", "httpfs", "iceberg"):
        c.execute(f"LOAD '{extension_file(ext)}'")
    # The same ATTACH the README shows.
    c.execute(f"ATTACH '{warehouse}' AS lake (TYPE iceberg, ENDPOINT '{catalog_uri}', AUTHORIZATION_TYPE 'none')")
    yield c
    c.close()


def test_create_insert_select(con, catalog, ns):
    con.execute(f"CREATE TABLE lake.{ns}.points (id BIGINT, label VARCHAR)")
    con.execute(f"INSERT INTO lake.{ns}.points VALUES (1, 'a'), (2, 'b')")
    got = con.execute(f"SELECT id, label FROM lake.{ns}.points ORDER BY id").fetchall()
    assert got == [(1, "a"), (2, "b")]
    # PyIceberg sees what DuckDB wrote.
    assert catalog.load_table(f"{ns}.points").scan().to_arrow().num_rows == 2


def test_reads_pyiceberg_table(con, catalog, ns):
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField
    t = catalog.create_table(f"{ns}.from_py", Schema(NestedField(1, "n", LongType(), required=False)))
    t.append(pa.Table.from_pylist([{"n": 5}, {"n": 7}]))
    assert con.execute(f"SELECT sum(n) FROM lake.{ns}.from_py").fetchone()[0] == 12


def test_ctas_on_local_warehouse(con, catalog, ns):
    """DuckDB's CREATE TABLE ... AS SELECT stage-creates the table, writes
    its manifest under <location>/metadata/ and only then commits: on a
    file:// warehouse the staged create must leave that directory in place
    (it used to fail with "Cannot open file ...-m0.avro")."""
    con.execute(f"CREATE TABLE lake.{ns}.src (id BIGINT, label VARCHAR)")
    con.execute(f"INSERT INTO lake.{ns}.src VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    con.execute(f"CREATE TABLE lake.{ns}.copy AS SELECT * FROM lake.{ns}.src WHERE id > 1")
    assert con.execute(f"SELECT id FROM lake.{ns}.copy ORDER BY id").fetchall() == [(2,), (3,)]
    assert catalog.load_table(f"{ns}.copy").scan().to_arrow().num_rows == 2
