"""GCS with vended tokens (the ``sqlite-gcs`` deployment of conftest):
the client gets a downscoped token and nothing else, writes the table's
data with it, and the catalog writes metadata with its own identity.
Google's STS is replaced by integration/gcsfake (nothing of Google's runs
offline): this shows who used which token, not Google's enforcement."""

from __future__ import annotations

import json
import urllib.request
import uuid

import pyarrow as pa
import pytest
from conftest import Running

import lakehold


def _requests(gcs: str) -> list[dict[str, str]]:
    with urllib.request.urlopen(gcs + "/_requests", timeout=10) as resp:
        return list(json.loads(resp.read()))


def test_vended_token_writes_and_reads_the_table(deployment: Running, catalog: lakehold.Catalog, namespace: str) -> None:
    if deployment.extra.get("gcs") is None:
        pytest.skip("GCS only (the sqlite-gcs deployment)")
    gcs = deployment.extra["gcs"]
    t = catalog.create_table(f"{namespace}.g_{uuid.uuid4().hex[:6]}", pa.schema([("id", pa.int64()), ("score", pa.float64())]))
    assert t.location.startswith("gs://lake/")
    res = t._rest.request("GET", t._path, headers={"X-Iceberg-Access-Delegation": "vended-credentials"})
    config = {**(res.get("config") or {}), **{k: v for c in res.get("storage-credentials") or [] for k, v in c["config"].items()}}
    assert config["gcs.oauth2.token"].startswith("bounded-"), "a token from the catalog's STS exchange"
    assert "catalog-token" not in json.dumps(res), "the catalog's own identity never reaches a client"
    assert not any(k.startswith("gcs.") and ("json" in k or "key" in k) for k in config), config

    before = len(_requests(gcs))
    t.append(pa.table({"id": list(range(100)), "score": [0.0] * 100}))
    t.merge_columns(pa.table({"id": [1, 2], "score": [1.0, 2.0]}), key="id")
    got = t.scan(selected_fields=("id", "score")).to_arrow().sort_by("id")
    assert got.column("score").to_pylist()[:4] == [0.0, 1.0, 2.0, 0.0]

    prefix = t.location.removeprefix("gs://lake/")
    quoted = urllib.request.quote(prefix + "/data/", safe="")
    writes = [r for r in _requests(gcs)[before:] if r["method"] in ("POST", "PUT") and "/upload/" in r["path"]]
    data = [r for r in writes if quoted in r["path"]]
    meta = [r for r in writes if urllib.request.quote(prefix + "/metadata/", safe="") in r["path"]]
    assert data and meta, writes
    assert all(r["token"].startswith("bounded-") for r in data), "the client wrote data with its vended token only"
    assert all(r["token"] == "catalog-token" for r in meta), "metadata is written by the catalog alone"
