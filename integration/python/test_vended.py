"""PyIceberg writes a table on S3 (SeaweedFS with STS) through vended
credentials alone: the client is given no storage keys."""
import os
import uuid

import pyarrow as pa
import pyarrow.fs as pafs
from pyiceberg.catalog import load_catalog

from restcall import request

URI = os.environ["CATALOG_URI"]
EP = os.environ["SEAWEED_S3_ENDPOINT"]


def call(method, path, body):
    return request(method, URI + path, body, raise_errors=True)[2]


def test_pyiceberg_writes_with_vended_credentials_only():
    admin = pafs.S3FileSystem(access_key="admin", secret_key="adminsecret", endpoint_override=EP, scheme="http",
                             region="us-east-1", allow_bucket_creation=True)
    try:
        admin.create_dir("warehouse")
    except OSError:
        pass  # exists
    wh = "s3py_" + uuid.uuid4().hex[:6]
    call("POST", "/management/v1/warehouses", {"name": wh, "location": f"s3://warehouse/{wh}"})
    call("PUT", f"/management/v1/warehouses/{wh}/storage-profile", {
        "type": "s3", "region": "us-east-1", "endpoint": EP, "path-style-access": True, "sts-endpoint": EP,
        "role-arn": "arn:aws:iam::000000000000:role/CatalogVendedRole",
        "access-key-id": "catalog", "secret-access-key": "catalogsecret"})

    cat = load_catalog("vended", **{"type": "rest", "uri": URI, "warehouse": wh})  # no s3.* keys
    cat.create_namespace("ns")
    t = cat.create_table("ns.events", pa.schema([pa.field("id", pa.int64())]))
    t.append(pa.Table.from_pylist([{"id": 1}, {"id": 2}, {"id": 3}]))
    again = cat.load_table("ns.events")
    assert again.scan().to_arrow().num_rows == 3
    assert again.location().startswith(f"s3://warehouse/{wh}/ns/events-")
    files = [task.file.file_path for task in again.scan().plan_files()]
    assert files and all(f.startswith(again.location() + "/") for f in files)
