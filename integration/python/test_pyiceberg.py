"""PyIceberg 0.12 against the catalog: namespaces, tables, writes, evolution,
time travel, staged creates."""
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.expressions import EqualTo
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "city", StringType(), required=False),
)
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("city", pa.string())])


def rows(*pairs):
    return pa.Table.from_pylist([{"id": i, "city": c} for i, c in pairs], schema=ARROW)


def test_namespaces_and_properties(catalog, ns):
    assert (ns,) in catalog.list_namespaces()
    with pytest.raises(NamespaceAlreadyExistsError):
        catalog.create_namespace(ns)
    catalog.create_namespace((ns, "child"), {"owner": "data-eng"})
    assert (ns, "child") in catalog.list_namespaces(ns)
    assert catalog.load_namespace_properties((ns, "child"))["owner"] == "data-eng"
    summary = catalog.update_namespace_properties((ns, "child"), removals={"owner", "absent"}, updates={"team": "x"})
    assert summary.removed == ["owner"]
    assert summary.updated == ["team"]
    assert summary.missing == ["absent"]
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace(ns)
    catalog.drop_namespace((ns, "child"))
    with pytest.raises(NoSuchNamespaceError):
        catalog.load_namespace_properties("missing_" + ns)


def test_create_load_list_rename_drop(catalog, ns):
    t = catalog.create_table(f"{ns}.t", SCHEMA)
    assert t.schema().find_field("id").field_id == 1
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table(f"{ns}.t", SCHEMA)
    assert (ns, "t") in catalog.list_tables(ns)
    assert catalog.table_exists(f"{ns}.t")
    catalog.create_namespace(f"{ns}_other")
    catalog.rename_table(f"{ns}.t", f"{ns}_other.renamed")
    assert not catalog.table_exists(f"{ns}.t")
    loaded = catalog.load_table(f"{ns}_other.renamed")
    assert loaded.metadata.table_uuid == t.metadata.table_uuid
    catalog.drop_table(f"{ns}_other.renamed")
    with pytest.raises(NoSuchTableError):
        catalog.load_table(f"{ns}_other.renamed")


def test_append_overwrite_delete(catalog, ns):
    t = catalog.create_table(f"{ns}.cities", SCHEMA)
    t.append(rows((1, "Oslo"), (2, "Lima")))
    t.append(rows((3, "Pune")))
    assert t.scan().to_arrow().num_rows == 3
    t.delete(EqualTo("city", "Lima"))
    assert sorted(t.scan().to_arrow()["city"].to_pylist()) == ["Oslo", "Pune"]
    t.overwrite(rows((9, "Kyiv")))
    fresh = catalog.load_table(f"{ns}.cities")
    assert fresh.scan().to_arrow()["id"].to_pylist() == [9]
    assert len(fresh.metadata.snapshots) >= 4


def test_schema_and_partition_evolution(catalog, ns):
    t = catalog.create_table(f"{ns}.evolve", SCHEMA)
    with t.update_schema() as upd:
        upd.add_column("country", StringType())
    with t.update_spec() as spec:
        spec.add_identity("city")
    t = catalog.load_table(f"{ns}.evolve")
    assert t.schema().find_field("country").field_id == 3
    assert [f.name for f in t.spec().fields] == ["city"]
    t.append(pa.Table.from_pylist([{"id": 1, "city": "Oslo", "country": "NO"}], schema=t.schema().as_arrow()))
    assert t.scan().to_arrow().num_rows == 1


def test_time_travel(catalog, ns):
    t = catalog.create_table(f"{ns}.tt", SCHEMA)
    t.append(rows((1, "a")))
    first = t.current_snapshot().snapshot_id
    t.append(rows((2, "b")))
    assert t.scan(snapshot_id=first).to_arrow().num_rows == 1
    assert t.scan().to_arrow().num_rows == 2


def test_snapshot_loading_mode_refs(catalog_uri, warehouse, catalog, ns):
    t = catalog.create_table(f"{ns}.refs", SCHEMA)
    t.append(rows((1, "a")))
    t.append(rows((2, "b")))
    refs_cat = load_catalog("refs", **{"type": "rest", "uri": catalog_uri, "warehouse": warehouse,
                                       "snapshot-loading-mode": "refs"})
    loaded = refs_cat.load_table(f"{ns}.refs")
    assert len(loaded.metadata.snapshots) == 1
    assert len(catalog.load_table(f"{ns}.refs").metadata.snapshots) == 2


def test_staged_create(catalog, ns):
    with catalog.create_table_transaction(f"{ns}.staged", SCHEMA, properties={"k": "v"}) as txn:
        txn.append(rows((1, "x")))
    t = catalog.load_table(f"{ns}.staged")
    assert t.properties["k"] == "v"
    assert t.scan().to_arrow().num_rows == 1


def test_partitioned_create(catalog, ns):
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="city"))
    t = catalog.create_table(f"{ns}.parts", SCHEMA, partition_spec=spec)
    t.append(rows((1, "Oslo"), (2, "Lima")))
    assert len(list(t.scan().plan_files())) == 2


def test_stale_commit_is_409(catalog, ns):
    t1 = catalog.create_table(f"{ns}.stale", SCHEMA)
    t2 = catalog.load_table(f"{ns}.stale")
    with t1.update_schema() as upd:
        upd.add_column("a", StringType())
    with pytest.raises(CommitFailedException):
        with t2.update_schema() as upd:
            upd.add_column("b", StringType())


def test_purge(catalog, ns):
    t = catalog.create_table(f"{ns}.purge", SCHEMA)
    t.append(rows((1, "a")))
    files = [task.file.file_path for task in t.scan().plan_files()]
    catalog.purge_table(f"{ns}.purge")
    # The catalog answers once the table is gone and deletes its files in a
    # background job (README, "Background jobs"): wait for it, boundedly.
    import os
    import time
    deadline = time.monotonic() + 60
    left = files
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = [f for f in files if os.path.exists(f.removeprefix("file://"))]
    assert not left, left


def test_bucket_partitioned_write(catalog, ns):
    """Bucket transforms are computed by pyiceberg-core (Rust): without it
    PyIceberg refuses the write. Rows land in one file per bucket, and a
    bucket-pruned scan reads only matching rows."""
    from pyiceberg.transforms import BucketTransform
    spec = PartitionSpec(PartitionField(source_id=1, field_id=1000, transform=BucketTransform(4), name="id_bucket"))
    t = catalog.create_table(f"{ns}.bucketed", SCHEMA, partition_spec=spec)
    t.append(rows(*[(i, f"c{i}") for i in range(20)]))
    t = catalog.load_table(f"{ns}.bucketed")
    files = list(t.inspect.files().to_pylist())
    buckets = {f["partition"]["id_bucket"] for f in files}
    assert len(files) == len(buckets) > 1, files
    assert t.scan().to_arrow().num_rows == 20
    assert t.scan(row_filter=EqualTo("id", 7)).to_arrow().to_pylist() == [{"id": 7, "city": "c7"}]
