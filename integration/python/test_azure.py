"""PyIceberg on Azure storage: a warehouse on Azurite (Microsoft's Azure
Storage emulator, started by integration/run.sh over HTTPS) with an adls
storage profile. The catalog writes its metadata there with the account
key; PyIceberg writes and reads data through fsspec's adlfs.

Azurite has no hierarchical namespace and ignores the directory SAS the
catalog vends (Azure/Azurite#2205), so the client here uses the account
key for its data and the vended token is checked another way: its fields,
and its signature against the one Microsoft's Python SDK computes for the
same directory, permissions, expiry and version."""
import os
import urllib.parse
import uuid

import pyarrow as pa
import pytest
from azure.storage.blob import BlobServiceClient
from azure.storage.blob._shared_access_signature import BlobSharedAccessSignature
from pyiceberg.catalog import load_catalog

from restcall import request

URI = os.environ["CATALOG_URI"]
EP = os.environ.get("AZURITE_BLOB_ENDPOINT", "")
ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CONN = f"DefaultEndpointsProtocol=https;AccountName={ACCOUNT};AccountKey={KEY};BlobEndpoint={EP}/{ACCOUNT};"
HOST = f"{ACCOUNT}.dfs.core.windows.net"

if not EP and os.environ.get("CATALOG_TEST_REQUIRE_AZURITE") == "1":
    raise RuntimeError("AZURITE_BLOB_ENDPOINT is not set but Azurite is required")
pytestmark = pytest.mark.skipif(not EP, reason="needs Azurite: AZURITE_BLOB_ENDPOINT (integration/run.sh starts it)")


def call(method, path, body=None, headers=None):
    return request(method, URI + path, body, headers, raise_errors=True)[2]


@pytest.fixture(scope="module")
def warehouse():
    fs = "interop" + uuid.uuid4().hex[:6]
    BlobServiceClient.from_connection_string(CONN).create_container(fs)
    wh = "az_" + fs
    call("POST", "/management/v1/warehouses", {"name": wh, "location": f"abfss://{fs}@{HOST}/lake"})
    call("PUT", f"/management/v1/warehouses/{wh}/storage-profile", {
        "type": "adls", "account-name": ACCOUNT, "filesystem": fs, "endpoint": EP, "account-key": KEY})
    return wh, fs


def test_pyiceberg_writes_and_reads_an_abfss_table(warehouse):
    wh, fs = warehouse
    cat = load_catalog("azure", **{"type": "rest", "uri": URI, "warehouse": wh,
                                   "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO", "adls.connection-string": CONN})
    cat.create_namespace("ns")
    t = cat.create_table("ns.scores", pa.schema([pa.field("id", pa.int64()), pa.field("score", pa.float64())]))
    assert t.location().startswith(f"abfss://{fs}@{HOST}/lake/ns/scores-")
    t.append(pa.Table.from_pylist([{"id": i, "score": i / 10} for i in range(100)]))
    t.delete("id >= 90")
    again = cat.load_table("ns.scores")
    got = again.scan().to_arrow()
    assert got.num_rows == 90
    assert sorted(got.column("id").to_pylist()) == list(range(90))
    # Every file the table names is inside it, on Azure storage.
    blobs = {b.name for b in BlobServiceClient.from_connection_string(CONN).get_container_client(fs).list_blobs()}
    prefix = again.location().removeprefix(f"abfss://{fs}@{HOST}/")
    for task in again.scan().plan_files():
        path = task.file.file_path
        assert path.startswith(again.location() + "/")
        assert path.removeprefix(f"abfss://{fs}@{HOST}/") in blobs
    assert again.metadata_location.removeprefix(f"abfss://{fs}@{HOST}/") in blobs, "the catalog wrote its metadata to Azure"
    assert any(b.startswith(prefix + "/data/") for b in blobs)
    cat.drop_table("ns.scores")


def test_vended_sas_matches_microsofts_sdk(warehouse):
    wh, fs = warehouse
    cat = load_catalog("azure2", **{"type": "rest", "uri": URI, "warehouse": wh,
                                    "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO", "adls.connection-string": CONN})
    cat.create_namespace("sas")
    t = cat.create_table("sas.t", pa.schema([pa.field("id", pa.int64())]))
    loaded = call("GET", f"/v1/{wh}/namespaces/sas/tables/t", headers={"X-Iceberg-Access-Delegation": "vended-credentials"})
    token = loaded["config"][f"adls.sas-token.{HOST}"]
    assert loaded["config"][f"adls.sas-token.{ACCOUNT}.blob.core.windows.net"] == token
    q = dict(urllib.parse.parse_qsl(token))
    directory = t.location().removeprefix(f"abfss://{fs}@{HOST}/")
    assert q["sr"] == "d" and q["sdd"] == str(directory.count("/") + 1)
    assert q["sp"] == "racwdl", "the anonymous caller may write"
    assert q["spr"] == "https"
    [cred] = loaded["storage-credentials"]
    assert cred["prefix"] == t.location()
    assert cred["config"]["adls.refresh-credentials-endpoint"] == f"v1/{wh}/namespaces/sas/tables/t/credentials"

    signer = BlobSharedAccessSignature(ACCOUNT, account_key=KEY)
    signer.x_ms_version = q["sv"]
    theirs = dict(urllib.parse.parse_qsl(signer.generate_blob(
        fs, directory, permission=q["sp"], expiry=q["se"], protocol=q["spr"], is_directory=True)))
    assert theirs["sr"] == "d" and theirs["sdd"] == q["sdd"]
    assert theirs["sig"] == q["sig"], "the directory SAS is signed as Microsoft's SDK signs it"
