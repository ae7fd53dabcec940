"""Test harness: real catalogs for the library's tests.

The catalog binary is ``$CATALOG_BIN`` when set, else built once per
session from this repository. ``catalog`` is parametrized over two
deployments:

- ``sqlite-file``: SQLite database, ``file://`` warehouse;
- ``postgres-s3``: a fresh Postgres database on ``CATALOG_TEST_DATABASE_URL``
  and a SeaweedFS S3 warehouse (``SEAWEED_S3_ENDPOINT``) whose storage
  profile vends STS credentials; the client is given no storage keys;
- ``sqlite-gcs``: SQLite and a ``gs://`` warehouse on fake-gcs-server whose
  ``gcs`` profile vends downscoped tokens. Google's token endpoint and STS
  cannot run offline: ``integration/gcsfake`` stands in for them (and
  serves fake-gcs-server), so these runs check the catalog's and the
  library's side of GCS, not Google's enforcement of the boundary.

Without those variables ``postgres-s3`` is skipped with the reason, unless
``LAKEHOLD_TEST_REQUIRE_ALL=1`` (set by make check), which makes it fail.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import lakehold

REPO = Path(__file__).resolve().parents[3]
REQUIRE_ALL = os.environ.get("LAKEHOLD_TEST_REQUIRE_ALL") == "1"
# SeaweedFS's admin identity, from integration/seaweed/iam.json: used only
# by the harness to create the bucket, never given to the library.
SEAWEED_ADMIN = ("admin", "adminsecret")
SEAWEED_CATALOG = ("catalog", "catalogsecret")


@dataclass
class Running:
    """A catalog process started by the harness."""

    uri: str
    warehouse: str
    proc: subprocess.Popen[bytes]
    log: Path
    db_args: list[str]
    backend: str
    extra: dict[str, str] = field(default_factory=dict)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def catalog_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The catalog binary under test."""
    if os.environ.get("CATALOG_BIN"):
        return os.environ["CATALOG_BIN"]
    out = tmp_path_factory.mktemp("bin") / "catalog"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/catalog"], cwd=REPO, check=True)
    return str(out)


def _call(uri: str, method: str, path: str, body: object | None = None) -> object:
    req = urllib.request.Request(uri + path, method=method, data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        raw = resp.read()
        return json.loads(raw) if raw else None


def start_catalog(binary: str, workdir: Path, *, database_url: str | None = None, warehouse_dir: Path | None = None,
                  extra_args: list[str] | None = None, env: dict[str, str] | None = None) -> Running:
    """Start ``catalog serve`` on a free port and wait for /healthz.

    With ``warehouse_dir`` the warehouse ``lake`` is a file:// warehouse
    there; without it the caller creates warehouses through the management
    API. Raises RuntimeError (with the log) when it does not come up.
    """
    port = _free_port()
    db_args = ["--database-url", database_url] if database_url else ["--data-dir", str(workdir / "data")]
    wh_args = ["--warehouse", f"lake=file://{warehouse_dir}", "--default-warehouse", "lake"] if warehouse_dir else []
    log = workdir / "catalog.log"
    cmd = [binary, "serve", "--listen", f"127.0.0.1:{port}", *db_args, *wh_args, "--log-level", "warn", *(extra_args or [])]
    proc = subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
    uri = f"http://127.0.0.1:{port}"
    for _ in range(300):
        if proc.poll() is not None:
            break
        try:
            urllib.request.urlopen(uri + "/healthz", timeout=1).read()
            return Running(uri, "lake", proc, log, db_args, "sqlite")
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("catalog did not start:\n" + log.read_text(errors="replace")[-3000:])


def stop_catalog(r: Running) -> None:
    r.proc.terminate()
    try:
        r.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        r.proc.kill()
        r.proc.wait()


def _need(*names: str) -> None:
    missing = [n for n in names if not os.environ.get(n)]
    if not missing:
        return
    reason = f"postgres-s3 needs {', '.join(missing)} (scripts/pg-start.sh, scripts/seaweed-start.sh)"
    if REQUIRE_ALL:
        pytest.fail(reason + "; LAKEHOLD_TEST_REQUIRE_ALL=1 asks for every backend")
    pytest.skip(reason)


def _fresh_database(url: str) -> str:
    """Create a database named for this session beside ``url``'s; its URL."""
    if not shutil.which("psql"):
        pytest.fail("psql is needed to create the Postgres test database")
    name = "lakehold_py_" + uuid.uuid4().hex[:10]
    subprocess.run(["psql", url, "-q", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    return url.rsplit("/", 1)[0] + f"/{name}?sslmode=disable"


def _s3_warehouse(r: Running, endpoint: str) -> str:
    """Create a bucket and an S3 warehouse with STS vending; its name."""
    import pyarrow.fs as pafs

    admin = pafs.S3FileSystem(access_key=SEAWEED_ADMIN[0], secret_key=SEAWEED_ADMIN[1],
                              endpoint_override=endpoint.split("://", 1)[1], scheme="http", region="us-east-1",
                              allow_bucket_creation=True)
    try:
        admin.create_dir("warehouse")
    except OSError:
        pass  # the bucket exists
    wh = "pylib_" + uuid.uuid4().hex[:8]
    _call(r.uri, "POST", "/management/v1/warehouses", {"name": wh, "location": f"s3://warehouse/{wh}"})
    _call(r.uri, "PUT", f"/management/v1/warehouses/{wh}/storage-profile", {
        "type": "s3", "region": "us-east-1", "endpoint": endpoint, "path-style-access": True, "sts-endpoint": endpoint,
        "role-arn": "arn:aws:iam::000000000000:role/CatalogVendedRole",
        "access-key-id": SEAWEED_CATALOG[0], "secret-access-key": SEAWEED_CATALOG[1]})
    return wh


@pytest.fixture(scope="session")
def gcsfake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """integration/gcsfake running (``$GCSFAKE_BIN`` or built here): its URL."""
    binary = os.environ.get("GCSFAKE_BIN")
    if not binary:
        binary = str(tmp_path_factory.mktemp("bin") / "gcsfake")
        subprocess.run(["go", "build", "-o", binary, "./integration/gcsfake"], cwd=REPO, check=True)
    proc = subprocess.Popen([binary, "--buckets", "lake"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    url = proc.stdout.readline().decode().strip()
    if not url.startswith("http://"):
        proc.kill()
        pytest.fail("integration/gcsfake did not start")
    yield url
    proc.terminate()
    proc.wait()


def _service_account(token_uri: str) -> dict[str, str]:
    """A service-account key (fresh RSA key) whose token endpoint is ``token_uri``."""
    pem = subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
                         check=True, capture_output=True, text=True).stdout
    return {"type": "service_account", "project_id": "lakehold-test", "private_key_id": "k1", "private_key": pem,
            "client_email": "catalog@lakehold-test.iam.gserviceaccount.com", "client_id": "1", "token_uri": token_uri}


def _gcs_warehouse(r: Running, gcs: str) -> str:
    """A gs:// warehouse on fake-gcs-server with a vending gcs profile; its
    name. The catalog's own metadata I/O uses the token ``catalog-token``,
    so the fake's request log tells its writes from the clients'."""
    wh = "pylib_" + uuid.uuid4().hex[:8]
    _call(r.uri, "POST", "/management/v1/warehouses", {"name": wh, "location": f"gs://lake/{wh}", "properties": {
        "gcs.service.host": gcs + "/storage/v1/", "gcs.oauth2.token": "catalog-token"}})
    _call(r.uri, "PUT", f"/management/v1/warehouses/{wh}/storage-profile", {
        "type": "gcs", "project-id": "lakehold-test", "endpoint": gcs + "/storage/v1/", "sts-endpoint": gcs,
        "credentials-json": _service_account(gcs + "/token")})
    return wh


@pytest.fixture(scope="session", params=["sqlite-file", "postgres-s3", "sqlite-gcs"])
def deployment(request: pytest.FixtureRequest, catalog_bin: str) -> Iterator[Running]:
    """A running catalog of one backend, for the whole session."""
    work = Path(tempfile.mkdtemp(prefix=f"lakehold-py-{request.param}-"))
    if request.param == "sqlite-file":
        wh = work / "warehouse"
        wh.mkdir()
        r = start_catalog(catalog_bin, work, warehouse_dir=wh)
        r.extra["warehouse_dir"] = str(wh)
    elif request.param == "postgres-s3":
        _need("CATALOG_TEST_DATABASE_URL", "SEAWEED_S3_ENDPOINT")
        env = {"CATALOG_SECRET_KEY": os.environ.get("CATALOG_SECRET_KEY") or base64.b64encode(os.urandom(32)).decode()}
        r = start_catalog(catalog_bin, work, database_url=_fresh_database(os.environ["CATALOG_TEST_DATABASE_URL"]),
                          env=env)
        r.backend = "postgres"
        r.warehouse = _s3_warehouse(r, os.environ["SEAWEED_S3_ENDPOINT"])
    elif request.param == "sqlite-gcs":
        gcs = request.getfixturevalue("gcsfake")
        env = {"CATALOG_SECRET_KEY": base64.b64encode(os.urandom(32)).decode()}
        r = start_catalog(catalog_bin, work, env=env)
        r.warehouse = _gcs_warehouse(r, gcs)
        r.extra["gcs"] = gcs
    yield r
    stop_catalog(r)
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture
def catalog(deployment: Running) -> lakehold.Catalog:
    """A library catalog on the deployment, with no storage keys."""
    return lakehold.load_catalog("test", uri=deployment.uri, warehouse=deployment.warehouse)


@pytest.fixture
def namespace(catalog: lakehold.Catalog) -> str:
    """A fresh namespace for one test."""
    ns = "t_" + uuid.uuid4().hex[:10]
    catalog.create_namespace(ns)
    return ns


@dataclass
class AuthCatalog:
    """A catalog with authentication on and one admin principal."""

    running: Running
    client_id: str
    client_secret: str


@pytest.fixture(scope="session")
def auth_deployment(catalog_bin: str) -> Iterator[AuthCatalog]:
    """A SQLite/file catalog with ``--auth on`` and a built-in admin principal."""
    work = Path(tempfile.mkdtemp(prefix="lakehold-py-auth-"))
    wh = work / "warehouse"
    wh.mkdir()
    r = start_catalog(catalog_bin, work, warehouse_dir=wh, extra_args=["--auth", "on", "--bootstrap-admin", "builtin:admin"])
    out = subprocess.run([catalog_bin, "principal", "create", "admin", *r.db_args], check=True, capture_output=True,
                         text=True).stdout
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    yield AuthCatalog(r, fields["client id"].strip(), fields["client secret"].strip())
    stop_catalog(r)
    shutil.rmtree(work, ignore_errors=True)
