"""Cross-checks of v4 manifests with an independent implementation (pyarrow).

1. Manifests written by the Go package (v4manifest TestWriteGolden) must have
   the field ids, types and repetition of the v4 layout.
2. A manifest written here with pyarrow, field ids as in the reference, must be
   read correctly by `catalog manifest inspect`.
"""
import json
import os
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

GOLDEN = os.environ.get("V4_GOLDEN_DIR")


def fid(i):
    return {b"PARQUET:field_id": str(i).encode()}


def field_ids(schema):
    """Map dotted path -> (field id, nullable, arrow type) for every node."""
    out = {}

    def walk(prefix, field):
        path = f"{prefix}{field.name}"
        md = field.metadata or {}
        out[path] = (int(md.get(b"PARQUET:field_id", b"-1")), field.nullable, field.type)
        t = field.type
        if pa.types.is_struct(t):
            for c in t:
                walk(path + ".", c)
        elif pa.types.is_list(t):
            walk(path + ".", t.value_field)

    for f in schema:
        walk("", f)
    return out


@pytest.fixture(scope="module")
def leaf():
    assert GOLDEN, "V4_GOLDEN_DIR must point at the Go-written manifests"
    return pq.read_table(os.path.join(GOLDEN, "leaf.parquet"))


def test_go_leaf_field_ids_and_repetition(leaf):
    ids = field_ids(leaf.schema)
    expect = {
        "tracking": (147, False), "tracking.status": (0, False), "tracking.snapshot_id": (1, True),
        "tracking.sequence_number": (3, True), "tracking.file_sequence_number": (4, True),
        "tracking.dv_snapshot_id": (5, True), "tracking.first_row_id": (142, True),
        "tracking.deleted_positions": (6, True), "tracking.replaced_positions": (7, True),
        "tracking.latest_column_file_snapshot_id": (160, True),
        "content_type": (134, False), "format_version": (157, False), "location": (100, False),
        "file_format": (101, False), "record_count": (103, False), "file_size_in_bytes": (104, False),
        "spec_id": (141, True), "partition": (102, True), "content_stats": (146, True), "sort_order_id": (140, True),
        "deletion_vector": (148, True), "deletion_vector.location": (155, False), "deletion_vector.offset": (144, False),
        "deletion_vector.size_in_bytes": (145, False), "deletion_vector.cardinality": (156, False),
        "deletion_vector.key_metadata": (149, True),
        "manifest_info": (150, True), "manifest_info.added_files_count": (504, False),
        "manifest_info.replaced_files_count": (520, False), "manifest_info.modified_files_count": (524, False),
        "manifest_info.modified_rows_count": (525, False), "manifest_info.min_sequence_number": (516, False),
        "manifest_info.dv": (522, True), "manifest_info.dv_cardinality": (523, True), "key_metadata": (131, True),
        "split_offsets": (132, True), "split_offsets.element": (133, False),
        "equality_ids": (135, True), "equality_ids.element": (136, False),
        "column_files": (158, True), "column_files.element": (159, False),
        "column_files.element.format_version": (161, False), "column_files.element.field_ids": (162, False),
        "column_files.element.field_ids.element": (163, False), "column_files.element.location": (164, False),
        "column_files.element.file_format": (165, False), "column_files.element.file_size_in_bytes": (166, False),
        "column_files.element.key_metadata": (167, True), "column_files.element.split_offsets": (168, True),
        "column_files.element.split_offsets.element": (169, False),
    }
    for path, (want_id, want_nullable) in expect.items():
        assert path in ids, path
        got_id, nullable, _ = ids[path]
        assert got_id == want_id, (path, got_id)
        assert nullable == want_nullable, (path, nullable)
    assert ids["manifest_info.added_files_count"][2] == pa.int32()
    assert ids["manifest_info.added_rows_count"][2] == pa.int64()
    assert ids["manifest_info.dv_cardinality"][2] == pa.int64()


def test_go_leaf_typed_stats_and_partition(leaf):
    ids = field_ids(leaf.schema)
    # stats id rule: 10000 + 200 * field id, metric offsets 1..7
    assert ids["content_stats.i"][0] == 10400
    assert ids["content_stats.i.lower_bound"][:1] == (10401,)
    assert ids["content_stats.i.lower_bound"][2] == pa.int32()
    assert ids["content_stats.dec9.lower_bound"][2] == pa.decimal128(9, 2)
    assert ids["content_stats.dec38.upper_bound"][2] == pa.decimal128(38, 10)
    assert ids["content_stats.ts.lower_bound"][2] == pa.timestamp("us")
    assert ids["content_stats.tstz.lower_bound"][2] == pa.timestamp("us", tz="UTC")
    assert ids["content_stats.s.avg_value_size_in_bytes"][0] == 12607
    assert ids["content_stats.f.nan_value_count"][0] == 10806
    assert ids["content_stats.loc_lat"][0] == 10000 + 200 * 19, "nested leaves get stats"
    assert "content_stats.tags" not in ids, "list fields get no stats"
    for path in ("partition.i", "partition.dt_day", "partition.s_bucket"):
        assert path in ids
    assert ids["partition.dt_day"][0] == 1001 and ids["partition.dt_day"][2] == pa.date32()
    # Parquet physical types of the decimals follow the precision.
    pqschema = pq.ParquetFile(os.path.join(GOLDEN, "leaf.parquet")).schema
    phys = {pqschema.column(i).path: pqschema.column(i).physical_type for i in range(len(pqschema))}
    assert phys["content_stats.dec9.lower_bound"] == "INT32"
    assert phys["content_stats.dec18.lower_bound"] == "INT64"
    assert phys["content_stats.dec38.lower_bound"] == "FIXED_LEN_BYTE_ARRAY"
    assert phys["content_stats.u.lower_bound"] == "FIXED_LEN_BYTE_ARRAY"


def test_go_leaf_values(leaf):
    rows = leaf.to_pylist()
    assert [r["tracking"]["status"] for r in rows] == [1, 0, 3, 4], "ADDED, EXISTING, REPLACED, MODIFIED"
    assert rows[0]["location"] == "data/a.parquet", "written relative to the table"
    assert [c["field_ids"] for c in rows[0]["column_files"]] == [[3, 5], [13]]
    assert rows[3]["tracking"]["latest_column_file_snapshot_id"] == 9
    assert rows[2]["location"] == rows[3]["location"], "REPLACED/MODIFIED pair by location"
    assert rows[0]["deletion_vector"]["cardinality"] == 3
    md = pq.ParquetFile(os.path.join(GOLDEN, "leaf.parquet")).metadata.metadata
    assert md[b"format-version"] == b"4" and md[b"content"] == b"data" and md[b"schema-id"] == b"3"


def test_go_root_row():
    root = pq.read_table(os.path.join(GOLDEN, "root.parquet")).to_pylist()
    assert len(root) == 1
    r = root[0]
    assert r["content_type"] == 3
    assert r["manifest_info"]["replaced_files_count"] == 1
    assert r["manifest_info"]["modified_files_count"] == 1
    assert r["manifest_info"]["min_sequence_number"] == 1
    # dv_cardinality (523) counts the manifest deletion vector: here the
    # Mumbling header's 3-byte little-endian count, which Go checked.
    dv = r["manifest_info"]["dv"]
    assert dv[0] == 1, "Mumbling version 1"
    assert r["manifest_info"]["dv_cardinality"] == int.from_bytes(dv[1:4], "little") == 1
    ids = field_ids(pq.read_schema(os.path.join(GOLDEN, "root.parquet")))
    assert ids["manifest_info.dv_cardinality"][:1] == (523,)
    assert ids["manifest_info.dv_cardinality"][2] == pa.int64()
    md = pq.ParquetFile(os.path.join(GOLDEN, "root.parquet")).metadata.metadata
    assert b"content" not in md, "the root manifest carries no content key"


def test_pyarrow_written_manifest_is_read(tmp_path):
    """A leaf written by pyarrow, with the reference field ids, through
    `catalog manifest inspect`."""
    tracking = pa.struct([
        pa.field("status", pa.int32(), False, fid(0)),
        pa.field("snapshot_id", pa.int64(), True, fid(1)),
        pa.field("sequence_number", pa.int64(), True, fid(3)),
        pa.field("file_sequence_number", pa.int64(), True, fid(4)),
        pa.field("first_row_id", pa.int64(), True, fid(142)),
        pa.field("latest_column_file_snapshot_id", pa.int64(), True, fid(160)),
    ])
    column_file = pa.struct([
        pa.field("format_version", pa.int32(), False, fid(161)),
        pa.field("field_ids", pa.list_(pa.field("element", pa.int32(), False, fid(163))), False, fid(162)),
        pa.field("location", pa.string(), False, fid(164)),
        pa.field("file_format", pa.string(), False, fid(165)),
        pa.field("file_size_in_bytes", pa.int64(), False, fid(166)),
    ])
    stats = pa.struct([
        pa.field("id", pa.struct([
            pa.field("lower_bound", pa.int64(), True, fid(10201)),
            pa.field("upper_bound", pa.int64(), True, fid(10202)),
            pa.field("value_count", pa.int64(), True, fid(10204)),
        ]), True, fid(10200)),
    ])
    schema = pa.schema([
        pa.field("tracking", tracking, False, fid(147)),
        pa.field("content_type", pa.int32(), False, fid(134)),
        pa.field("format_version", pa.int32(), False, fid(157)),
        pa.field("location", pa.string(), False, fid(100)),
        pa.field("file_format", pa.string(), False, fid(101)),
        pa.field("record_count", pa.int64(), False, fid(103)),
        pa.field("file_size_in_bytes", pa.int64(), False, fid(104)),
        pa.field("content_stats", stats, True, fid(146)),
        pa.field("column_files", pa.list_(pa.field("element", column_file, False, fid(159))), True, fid(158)),
    ])
    rows = [
        {"tracking": {"status": 4, "snapshot_id": 1, "sequence_number": 9, "file_sequence_number": 1, "first_row_id": 0,
                      "latest_column_file_snapshot_id": 9},
         "content_type": 0, "format_version": 4, "location": "data/base.parquet", "file_format": "PARQUET",
         "record_count": 1000, "file_size_in_bytes": 12345,
         "content_stats": {"id": {"lower_bound": 1, "upper_bound": 1000, "value_count": 1000}},
         "column_files": [{"format_version": 4, "field_ids": [12, 13], "location": "data/cf.parquet",
                           "file_format": "parquet", "file_size_in_bytes": 4242}]},
        {"tracking": {"status": 1, "snapshot_id": None, "sequence_number": None, "file_sequence_number": None,
                      "first_row_id": None, "latest_column_file_snapshot_id": None},
         "content_type": 0, "format_version": 4, "location": "s3://other/abs.parquet", "file_format": "parquet",
         "record_count": 5, "file_size_in_bytes": 10, "content_stats": None, "column_files": None},
    ]
    path = tmp_path / "py-leaf.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, compression="gzip")
    out = subprocess.run([os.environ["CATALOG_BIN"], "manifest", "inspect", str(path), "--table-location", "s3://b/t"],
                         check=True, capture_output=True, text=True).stdout
    got = [json.loads(line) for line in out.splitlines()]
    assert len(got) == 2
    a, b = got
    assert a["tracking"]["status"] == "MODIFIED"
    assert a["tracking"]["sequence_number"] == 9
    assert a["location"] == "s3://b/t/data/base.parquet", "relative paths resolve against the table"
    assert a["column_files"][0]["field_ids"] == [12, 13]
    assert a["column_files"][0]["location"] == "s3://b/t/data/cf.parquet"
    assert a["content_stats"]["1"] == {"lower_bound": 1, "upper_bound": 1000, "value_count": 1000}
    assert b["tracking"] == {"status": "ADDED"}, "nulls stay null (inherited later)"
    assert b["location"] == "s3://other/abs.parquet", "absolute paths are kept"
