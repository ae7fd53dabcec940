"""s3warehouse.py CATALOG_URI NAME [signing]: creates warehouse NAME at
s3://warehouse/NAME on the SeaweedFS of SEAWEED_S3_ENDPOINT (and the bucket
when missing), with a storage profile as an operator would set it: STS
vending through the role of iam.json, or with "signing" a signing-only
profile (remote-signing-enabled, no role). The interop tests import
create_warehouse; integration/run.sh runs it before starting Trino."""
import json
import os
import sys
import urllib.request

import pyarrow.fs as pafs


def admin_fs() -> pafs.S3FileSystem:
    """SeaweedFS as its administrator (integration/seaweed/iam.json)."""
    return pafs.S3FileSystem(access_key="admin", secret_key="adminsecret", endpoint_override=os.environ["SEAWEED_S3_ENDPOINT"],
                             scheme="http", region="us-east-1", allow_bucket_creation=True)


def create_warehouse(uri: str, name: str, signing: bool = False) -> None:
    """Creates warehouse name on SeaweedFS with its storage profile."""
    ep = os.environ["SEAWEED_S3_ENDPOINT"]
    try:
        admin_fs().create_dir("warehouse")
    except OSError:
        pass  # exists
    profile = {"type": "s3", "region": "us-east-1", "endpoint": ep, "path-style-access": True,
               "access-key-id": "catalog", "secret-access-key": "catalogsecret"}
    if signing:
        profile["remote-signing-enabled"] = True
    else:
        profile.update({"sts-endpoint": ep, "role-arn": "arn:aws:iam::000000000000:role/CatalogVendedRole"})
    for method, path, body in (("POST", "/management/v1/warehouses", {"name": name, "location": f"s3://warehouse/{name}"}),
                               ("PUT", f"/management/v1/warehouses/{name}/storage-profile", profile)):
        req = urllib.request.Request(uri + path, method=method, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req).read()


if __name__ == "__main__":
    create_warehouse(sys.argv[1], sys.argv[2], len(sys.argv) > 3 and sys.argv[3] == "signing")
