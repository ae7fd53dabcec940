"""Real clients against a catalog with access control on: built-in service
principals through POST /v1/oauth/tokens (PyIceberg and Spark configured with
credential= as their docs say), a Keycloak token for PyIceberg (token=), and
storage credentials on SeaweedFS that follow the caller's grant.

integration/run.sh starts the catalog with --auth on, Keycloak as the OIDC
provider and --bootstrap-admin builtin:admin, and passes the admin's
credential in ADMIN_CREDENTIAL."""
import json
import os
import urllib.parse
import urllib.request
import uuid

import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import ForbiddenError

from restcall import request

URI = os.environ["CATALOG_URI"]
WH = os.environ["CATALOG_WAREHOUSE"]
ISSUER = os.environ["KEYCLOAK_ISSUER"]
EP = os.environ["SEAWEED_S3_ENDPOINT"]
TOKENS = URI + "/v1/oauth/tokens"


def post_form(url, form):
    data = urllib.parse.urlencode(form).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data)) as resp:
        return json.loads(resp.read())


def catalog_token(credential):
    cid, secret = credential.split(":", 1)
    return post_form(TOKENS, {"grant_type": "client_credentials", "client_id": cid, "client_secret": secret,
                              "scope": "catalog"})["access_token"]


def call(method, path, body, token):
    status, _, data = request(method, URI + path, body, {"Authorization": "Bearer " + token})
    return status, data


def ok(result):
    status, body = result
    assert status < 300, body
    return body


READ = ["namespace-list", "table-list", "table-read-metadata", "table-read-data"]
WRITE = READ + ["table-create", "table-write-metadata", "table-write-data"]


@pytest.fixture(scope="module")
def world():
    """Principals reader and writer, role grants on one namespace of the
    file warehouse and of an S3 warehouse, group analysts as readers."""
    admin = catalog_token(os.environ["ADMIN_CREDENTIAL"])
    tag = uuid.uuid4().hex[:6]
    creds = {}
    for who in ("reader", "writer"):
        p = ok(call("POST", "/management/v1/principals", {"name": f"{who}_{tag}"}, admin))
        creds[who] = f"{p['client-id']}:{p['client-secret']}"
    s3wh = "s3auth_" + tag
    s3 = pafs.S3FileSystem(access_key="admin", secret_key="adminsecret", endpoint_override=EP, scheme="http",
                           region="us-east-1", allow_bucket_creation=True)
    try:
        s3.create_dir("warehouse")
    except OSError:
        pass  # exists
    ok(call("POST", "/management/v1/warehouses", {"name": s3wh, "location": f"s3://warehouse/{s3wh}"}, admin))
    ok(call("PUT", f"/management/v1/warehouses/{s3wh}/storage-profile", {
        "type": "s3", "region": "us-east-1", "endpoint": EP, "path-style-access": True, "sts-endpoint": EP,
        "role-arn": "arn:aws:iam::000000000000:role/CatalogVendedRole",
        "access-key-id": "catalog", "secret-access-key": "catalogsecret"}, admin))
    ns = "auth_" + tag
    for wh in (WH, s3wh):
        ok(call("POST", f"/v1/{wh}/namespaces", {"namespace": [ns]}, admin))
    for role, privs, assignees in (("readers_" + tag, READ, [("builtin", f"reader_{tag}"), ("group", "analysts")]),
                                   ("writers_" + tag, WRITE, [("builtin", f"writer_{tag}")])):
        ok(call("POST", "/management/v1/roles", {"name": role}, admin))
        for wh in (WH, s3wh):
            for p in privs:
                ok(call("POST", f"/management/v1/roles/{role}/grants", {
                    "privilege": p, "resource": {"kind": "namespace", "warehouse": wh, "namespace": [ns]}}, admin))
        for kind, name in assignees:
            ok(call("POST", f"/management/v1/roles/{role}/assignments", {"kind": kind, "name": name}, admin))
    return {"creds": creds, "ns": ns, "s3wh": s3wh, "s3": s3}


def pyiceberg(credential, warehouse=WH, **extra):
    # Configured as PyIceberg's docs and our README say.
    return load_catalog("lake-" + uuid.uuid4().hex[:6], **{
        "type": "rest", "uri": URI, "warehouse": warehouse, "credential": credential,
        "oauth2-server-uri": TOKENS, "scope": "catalog", **extra})


ROWS = pa.Table.from_pylist([{"id": 1}, {"id": 2}, {"id": 3}])


def test_reader_scans_but_cannot_append(world):
    ns = world["ns"]
    writer = pyiceberg(world["creds"]["writer"])
    t = writer.create_table(f"{ns}.events", pa.schema([pa.field("id", pa.int64())]))
    t.append(ROWS)
    before = writer.load_table(f"{ns}.events").current_snapshot().snapshot_id

    reader = pyiceberg(world["creds"]["reader"])
    rt = reader.load_table(f"{ns}.events")
    assert rt.scan().to_arrow().num_rows == 3
    with pytest.raises(ForbiddenError):
        rt.append(ROWS)
    after = writer.load_table(f"{ns}.events")
    assert after.current_snapshot().snapshot_id == before, "a refused append commits nothing"
    assert after.scan().to_arrow().num_rows == 3


def test_unknown_credential_is_refused():
    with pytest.raises(Exception) as e:
        pyiceberg("no-such-client:wrong-secret").list_namespaces()
    assert "invalid_client" in str(e.value) or "401" in str(e.value)


def test_keycloak_user_token(world):
    ns = world["ns"]
    writer = pyiceberg(world["creds"]["writer"])
    writer.create_table(f"{ns}.shared", pa.schema([pa.field("id", pa.int64())])).append(ROWS)
    tok = post_form(ISSUER + "/protocol/openid-connect/token", {
        "grant_type": "password", "client_id": "cli", "client_secret": "cli-secret",
        "username": "alice", "password": "alice-password"})["access_token"]
    alice = load_catalog("alice", **{"type": "rest", "uri": URI, "warehouse": WH, "token": tok})
    # alice is in group analysts: she sees only the granted namespace.
    assert (ns,) in alice.list_namespaces()
    assert all(n == (ns,) for n in alice.list_namespaces())
    assert alice.load_table(f"{ns}.shared").scan().to_arrow().num_rows == 3
    with pytest.raises(ForbiddenError):
        alice.create_table(f"{ns}.mine", pa.schema([pa.field("id", pa.int64())]))


def vended_s3(catalog, ident):
    """The S3 keys the catalog vended to this caller for the table."""
    t = catalog.load_table(ident)
    props = t.io.properties
    return t.location(), pafs.S3FileSystem(
        access_key=props["s3.access-key-id"], secret_key=props["s3.secret-access-key"],
        session_token=props.get("s3.session-token"), endpoint_override=EP, scheme="http", region="us-east-1")


def test_reader_vended_credentials_cannot_write(world):
    ns, wh = world["ns"], world["s3wh"]
    writer = pyiceberg(world["creds"]["writer"], warehouse=wh, **{"header.X-Iceberg-Access-Delegation": "vended-credentials"})
    writer.create_table(f"{ns}.objects", pa.schema([pa.field("id", pa.int64())])).append(ROWS)
    reader = pyiceberg(world["creds"]["reader"], warehouse=wh, **{"header.X-Iceberg-Access-Delegation": "vended-credentials"})
    assert reader.load_table(f"{ns}.objects").scan().to_arrow().num_rows == 3

    loc, rfs = vended_s3(reader, f"{ns}.objects")
    path = loc.removeprefix("s3://") + "/data/reader-was-here.txt"
    with pytest.raises(OSError):
        with rfs.open_output_stream(path) as f:
            f.write(b"no")
    # The same put with the writer's vended keys works: the refusal above
    # is the grant, not a broken set-up.
    _, wfs = vended_s3(writer, f"{ns}.objects")
    with wfs.open_output_stream(loc.removeprefix("s3://") + "/data/writer-was-here.txt") as f:
        f.write(b"yes")


def test_spark_with_service_principals(world):
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession
    ns = world["ns"]
    b = (SparkSession.builder.master("local[1]").appName("lakehold-auth")
         .config("spark.jars", os.environ["SPARK_JARS"])
         .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
         .config("spark.ui.enabled", "false")
         .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1"))
    for name, who in (("w", "writer"), ("r", "reader")):
        # The catalog settings the README shows.
        b = (b.config(f"spark.sql.catalog.{name}", "org.apache.iceberg.spark.SparkCatalog")
             .config(f"spark.sql.catalog.{name}.type", "rest")
             .config(f"spark.sql.catalog.{name}.uri", URI)
             .config(f"spark.sql.catalog.{name}.warehouse", WH)
             .config(f"spark.sql.catalog.{name}.credential", world["creds"][who])
             .config(f"spark.sql.catalog.{name}.oauth2-server-uri", TOKENS)
             .config(f"spark.sql.catalog.{name}.scope", "catalog"))
    spark = b.getOrCreate()
    try:
        spark.sql(f"CREATE TABLE w.{ns}.sp (id BIGINT) USING iceberg")
        spark.sql(f"INSERT INTO w.{ns}.sp VALUES (1), (2)")
        assert spark.sql(f"SELECT count(*) FROM r.{ns}.sp").collect()[0][0] == 2
        with pytest.raises(Exception) as e:
            spark.sql(f"INSERT INTO r.{ns}.sp VALUES (3)")
        assert "Forbidden" in str(e.value) or "403" in str(e.value)
        assert spark.sql(f"SELECT count(*) FROM w.{ns}.sp").collect()[0][0] == 2
    finally:
        spark.stop()


def test_trino_with_service_principals(world):
    """Trino 483 configured with iceberg.rest-catalog.security=OAUTH2 and a
    service principal's credential, as the README shows: the writer's
    catalog creates and inserts, the reader's reads and is refused."""
    trino = pytest.importorskip("trino")
    home = os.environ.get("TRINO_HOME")
    if not home:
        pytest.skip("TRINO_HOME is not set (integration/run.sh assembles Trino 483)")
    import subprocess
    ns = world["ns"]
    here = os.path.dirname(os.path.abspath(__file__))
    s3wh = world["s3wh"]
    out = subprocess.run(["bash", os.path.join(here, "..", "trino", "start.sh"), home, URI, WH,
                          "w=" + world["creds"]["writer"], "r=" + world["creds"]["reader"],
                          f"ws={world['creds']['writer']}@s3:{s3wh}", f"rs={world['creds']['reader']}@s3:{s3wh}"],
                         check=True, capture_output=True, text=True, env={**os.environ, "TRINO_S3_ENDPOINT": EP}).stdout
    env = dict(line.split("=", 1) for line in out.split() if "=" in line)
    try:
        host, port = env["TRINO_URI"].removeprefix("http://").split(":")
        conn = trino.dbapi.connect(host=host, port=int(port), user="interop")

        def q(sql):
            cur = conn.cursor()
            cur.execute(sql)
            return cur.fetchall()

        q(f"CREATE TABLE w.{ns}.tr (id bigint)")
        q(f"INSERT INTO w.{ns}.tr VALUES 1, 2")
        assert q(f"SELECT count(*) FROM r.{ns}.tr") == [[2]]
        with pytest.raises(Exception) as e:
            q(f"INSERT INTO r.{ns}.tr VALUES 3")
        assert "Forbidden" in str(e.value) or "403" in str(e.value) or "not authorized" in str(e.value).lower()
        assert q(f"SELECT count(*) FROM w.{ns}.tr") == [[2]]

        # On S3 with vended credentials: the reader's keys are read-only,
        # so its insert fails writing the data file, before any commit.
        q(f"CREATE TABLE ws.{ns}.tr3 (id bigint)")
        q(f"INSERT INTO ws.{ns}.tr3 VALUES 1, 2")
        assert q(f"SELECT count(*) FROM rs.{ns}.tr3") == [[2]]
        loc = q(f'SELECT file_path FROM ws.{ns}."tr3$files"')[0][0].split("/data/")[0]
        sel = pafs.FileSelector(loc.removeprefix("s3://"), recursive=True)
        before = {i.path for i in world["s3"].get_file_info(sel)}
        with pytest.raises(Exception) as e:
            q(f"INSERT INTO rs.{ns}.tr3 VALUES 3")
        # Trino names the failed upload of the data file, not the S3 error.
        assert "HIVE_WRITER_CLOSE_ERROR" in str(e.value) or "access denied" in str(e.value).lower(), e.value
        assert {i.path for i in world["s3"].get_file_info(sel)} == before, "the reader wrote nothing"
        assert q(f"SELECT count(*) FROM ws.{ns}.tr3") == [[2]]
    finally:
        subprocess.run(["kill", env.get("TRINO_PID", "0")], check=False)
