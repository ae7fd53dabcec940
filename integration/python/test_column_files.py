"""Column-file commits seen by an independent reader (pyarrow).

Over plain HTTP: create a v4 table, add base files written by pyarrow,
commit column files (same field twice, a two-field file then one of its
fields again), and check the manifests the server wrote: REPLACED/MODIFIED
pairs, field ids, carried-over field_ids lists.
"""
import os
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

from restcall import V4, request

URI = os.environ["CATALOG_URI"]
WH = os.environ["CATALOG_WAREHOUSE"]


def call(method, path, body=None):
    status, _, data = request(method, f"{URI}/v1/{WH}{path}", body, V4)
    return status, data


def fid(i):
    return {b"PARQUET:field_id": str(i).encode()}


def local(loc):
    return loc.removeprefix("file://")


def write(path, columns):
    """columns: list of (field id, name, arrow type, values)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    schema = pa.schema([pa.field(n, t, True, fid(i)) for i, n, t, _ in columns])
    pq.write_table(pa.table([pa.array(v, t) for _, _, t, v in columns], schema=schema), path)
    return os.path.getsize(path)


def manifest_rows(loc, table_loc):
    path = loc if loc.startswith("file:") else f"{table_loc}/{loc}"
    return pq.read_table(local(path)).to_pylist()


def live_rows(table_loc, root_loc):
    """Data rows of the tree: those of live leaves and those the root holds itself."""
    out = []
    for r in manifest_rows(root_loc, table_loc):
        if r["content_type"] != 3:
            out.append(r)
        elif r["tracking"]["status"] in (0, 1, 4):
            out.extend(manifest_rows(r["location"], table_loc))
    return out


def test_column_file_manifests_read_by_pyarrow():
    ns = "cf_" + uuid.uuid4().hex[:8]
    assert call("POST", "/namespaces", {"namespace": [ns]})[0] == 200
    schema = {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": True},
        {"id": 2, "name": "emb", "type": "double", "required": False},
        {"id": 3, "name": "score", "type": "double", "required": False},
        {"id": 4, "name": "label", "type": "string", "required": False}]}
    st, res = call("POST", f"/namespaces/{ns}/tables", {"name": "t", "schema": schema, "properties": {"format-version": "4"}})
    assert st == 200, res
    loc = res["metadata"]["location"]
    n = 4
    size = write(local(f"{loc}/data/base.parquet"), [
        (1, "id", pa.int64(), list(range(n))), (2, "emb", pa.float64(), [0.0] * n),
        (3, "score", pa.float64(), [0.0] * n), (4, "label", pa.string(), ["x"] * n)])
    st, res = call("POST", f"/namespaces/{ns}/tables/t/files", {"add-data-files": [
        {"location": "data/base.parquet", "file-format": "parquet", "record-count": n, "file-size-in-bytes": size, "spec-id": 0}]})
    assert st == 200, res

    def column_commit(name, cols):
        size = write(local(f"{loc}/data/{name}"), cols)
        return call("POST", f"/namespaces/{ns}/tables/t/column-files", {"column-files": [
            {"data-file": "data/base.parquet", "location": f"data/{name}", "file-format": "parquet",
             "field-ids": [c[0] for c in cols], "file-size-in-bytes": size, "record-count": n}]})

    st, res = column_commit("cf1.parquet", [(2, "emb", pa.float64(), [1.0] * n), (3, "score", pa.float64(), [0.5] * n)])
    assert st == 200, res
    snap = res["metadata"]["snapshots"][-1]
    root = manifest_rows(snap["root-manifest"], loc)
    # The only leaf held nothing but the base: it is retired (DELETED) and
    # the base's REPLACED and MODIFIED rows go side by side into the root,
    # the single manifest this commit writes.
    assert [(r["tracking"]["status"], r["content_type"]) for r in root] == [(2, 3), (3, 0), (4, 0)], \
        "leaf DELETED, then REPLACED and MODIFIED data rows in the root"
    replaced, modified = root[1], root[2]
    assert replaced["location"] == modified["location"]
    assert replaced["tracking"]["snapshot_id"] == snap["snapshot-id"]
    assert modified["tracking"]["latest_column_file_snapshot_id"] == snap["snapshot-id"]
    assert modified["tracking"]["sequence_number"] == snap["sequence-number"], "data sequence number bumped"
    assert modified["tracking"]["file_sequence_number"] == replaced["tracking"]["file_sequence_number"]
    assert [(c["location"], c["field_ids"]) for c in modified["column_files"]] == [("data/cf1.parquet", [2, 3])]
    assert replaced["column_files"] is None

    # The same field again, then the rest of the first file.
    st, res = column_commit("cf2.parquet", [(3, "score", pa.float64(), [0.7] * n)])
    assert st == 200, res
    live = live_rows(loc, res["metadata"]["snapshots"][-1]["root-manifest"])
    (row,) = [r for r in live if r["tracking"]["status"] == 4]
    assert sorted((c["location"], c["field_ids"]) for c in row["column_files"]) == [
        ("data/cf1.parquet", [2]), ("data/cf2.parquet", [3])], "carried-over field_ids"
    st, res = column_commit("cf3.parquet", [(2, "emb", pa.float64(), [2.0] * n)])
    assert st == 200, res
    live = live_rows(loc, res["metadata"]["snapshots"][-1]["root-manifest"])
    (row,) = [r for r in live if r["tracking"]["status"] == 4]
    assert sorted((c["location"], c["field_ids"]) for c in row["column_files"]) == [
        ("data/cf2.parquet", [3]), ("data/cf3.parquet", [2])], "cf1 retired once empty"
    assert res["metadata"]["snapshots"][-1]["summary"]["retired-column-files"] == "1"

    # A REQUIRED column in the column file is rejected with its reason.
    path = local(f"{loc}/data/bad.parquet")
    pq.write_table(pa.table({"score": pa.array([1.0] * n)}, schema=pa.schema([pa.field("score", pa.float64(), False, fid(3))])), path)
    st, res = call("POST", f"/namespaces/{ns}/tables/t/column-files", {"column-files": [
        {"data-file": "data/base.parquet", "location": "data/bad.parquet", "file-format": "parquet",
         "field-ids": [3], "file-size-in-bytes": os.path.getsize(path), "record-count": n}]})
    assert st == 400 and res["error"]["type"] == "ValidationException" and res["error"]["reason"] == "required-column", res
