"""Every fenced block of README.md, run or checked against a live catalog.

Each block is preceded by a marker line, ``<!-- readme-test: KIND [ARGS] -->``,
which names how it is tested (the HANDLERS table below); a block without a
marker, or with an unknown kind, fails ``test_every_block_has_a_test``, so a
new snippet cannot land untested.

- ``serve-embedded``: the README's first command starts the catalog that the
  other snippets talk to (the binary stands in for ``go run ./cmd/catalog``,
  on a free port instead of 8181, in a fresh directory).
- ``serve-postgres``: the Postgres command, on a fresh database of the test's
  Postgres (CATALOG_TEST_DATABASE_URL).
- ``console``: the command is run and its output compared exactly.
- ``log-lines``: each README log line is matched, by message and error type,
  to a line the running catalog wrote; the keys must be the same.
- ``python`` / ``python-lakehold`` / ``python-auth`` / ``python-events``: executed as written
  (URIs and placeholders substituted), then the object they build is used.
  The lakehold snippet runs in the library's own venv (LAKEHOLD_PYTHON).
- ``spark-conf FILE`` / ``trino-properties``: the settings must be the ones
  the interop test of that engine runs with (those tests run the engines).
- ``flags`` / ``image``: every flag and environment variable the snippet
  uses exists in the command's ``--help`` (``flags``: the command the
  snippet names, ``catalog serve`` when it names none). Containers cannot run on this
  machine (no user namespaces for crun), so the ``docker run`` lines are
  checked, not run; ``scripts/image.sh --check`` runs them where they can.
- ``skip: REASON``: reported as skipped with its reason.

CATALOG_BIN is the binary under test. README_TEST_REQUIRE_ALL=1 (set by
integration/run.sh) turns the skips for a missing Postgres or lakehold venv
into failures.
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import shlex
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
README_URI = "http://127.0.0.1:8181"
MARKER = re.compile(r"^<!-- readme-test: (.+?) -->$")


@dataclass
class Snippet:
    line: int  # 1-based line of the opening fence
    kind: str | None
    args: str
    lang: str
    body: str


def read_snippets(path: pathlib.Path = README) -> list[Snippet]:
    out: list[Snippet] = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        kind, args = None, ""
        mk = MARKER.match(lines[start - 1]) if start > 0 else None
        if mk:
            kind, _, args = mk.group(1).partition(" ")
            kind = kind.rstrip(":")
        out.append(Snippet(start + 1, kind, args.strip(), lang, "\n".join(lines[start + 1:j])))
        i = j + 1
    return out


SNIPPETS = read_snippets()


def require(what: str) -> None:
    """Skips for a missing prerequisite, or fails under README_TEST_REQUIRE_ALL."""
    if os.environ.get("README_TEST_REQUIRE_ALL") == "1":
        pytest.fail(f"{what} is required (README_TEST_REQUIRE_ALL=1)")
    pytest.skip(f"{what} is not available")


def catalog_bin() -> str:
    b = os.environ.get("CATALOG_BIN")
    if not b:
        require("CATALOG_BIN")
    return b  # type: ignore[return-value]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method: str, url: str, body: dict | None = None, token: str | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else {}
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, json.loads(raw) if raw else {}


@dataclass
class Running:
    uri: str
    cwd: pathlib.Path
    log: pathlib.Path
    proc: subprocess.Popen


def start(argv: list[str], cwd: pathlib.Path, port: int) -> Running:
    log = cwd / "catalog.log"
    proc = subprocess.Popen(argv + ["--listen", f"127.0.0.1:{port}"], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    uri = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if http("GET", uri + "/healthz")[0] == 200:
                return Running(uri, cwd, log, proc)
        except OSError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    pytest.fail(f"the catalog did not start: {log.read_text()[-2000:]}")


def stop(r: Running) -> None:
    r.proc.terminate()
    try:
        r.proc.wait(10)
    except subprocess.TimeoutExpired:
        r.proc.kill()


def command_argv(body: str) -> list[str]:
    """The snippet's command as argv, with the binary for `go run ./cmd/catalog`."""
    argv = shlex.split(body.replace("\\\n", " "))
    if argv[:3] == ["go", "run", "./cmd/catalog"]:
        argv = [catalog_bin()] + argv[3:]
    return argv


def first(kind: str) -> Snippet:
    return next(s for s in SNIPPETS if s.kind == kind)


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    """The README's first command, with a namespace and a table for the clients."""
    cwd = tmp_path_factory.mktemp("readme-embedded")
    r = start(command_argv(first("serve-embedded").body), cwd, free_port())
    assert http("POST", r.uri + "/v1/default/namespaces", {"namespace": ["readme"]})[0] == 200
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}
    st, body = http("POST", r.uri + "/v1/default/namespaces/readme/tables", {"name": "t", "schema": schema})
    assert st == 200, body
    yield r
    stop(r)


@pytest.fixture(scope="module")
def with_auth(tmp_path_factory):
    """An embedded catalog with --auth on and a built-in admin principal."""
    cwd = tmp_path_factory.mktemp("readme-auth")
    out = subprocess.run([catalog_bin(), "principal", "create", "readme", "--data-dir", str(cwd / "data")],
                         capture_output=True, text=True, check=True).stdout
    cid = re.search(r"client id: *(\S+)", out).group(1)  # type: ignore[union-attr]
    secret = re.search(r"client secret: *(\S+)", out).group(1)  # type: ignore[union-attr]
    r = start([catalog_bin(), "serve", "--data-dir", str(cwd / "data"), "--auth", "on",
               "--bootstrap-admin", "builtin:readme"], cwd, free_port())
    yield r, cid, secret
    stop(r)


def localize(body: str, uri: str) -> str:
    return body.replace(README_URI, uri)


def run_python(s: Snippet, embedded: Running) -> None:
    g: dict = {}
    exec(compile(localize(s.body, embedded.uri), f"README.md:{s.line}", "exec"), g)
    if "cat" in g:
        assert ("readme",) in g["cat"].list_namespaces()
        assert g["cat"].load_table("readme.t").schema().find_field("id")
    elif "con" in g:
        assert g["con"].execute("SELECT count(*) FROM lake.readme.t").fetchone() == (0,)
    else:
        pytest.fail("the snippet builds neither `cat` nor `con`; teach this test what to check")


def run_python_events(s: Snippet, embedded: Running) -> None:
    """The events snippet lists, among others, a namespace created just now."""
    name = f"events_{int(time.time() * 1000)}"
    req = urllib.request.Request(f"{embedded.uri}/v1/default/namespaces", method="POST",
                                 data=json.dumps({"namespace": [name]}).encode(),
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req).read()
    g: dict = {}
    exec(compile(localize(s.body, embedded.uri), f"README.md:{s.line}", "exec"), g)
    page = g["page"]
    assert page["continuation-token"]
    created = [e["operation"].get("namespace") for e in page["events"]
               if e["operation"]["operation-type"] == "create-namespace"]
    assert [name] in created, created


def run_python_lakehold(s: Snippet, embedded: Running) -> None:
    py = os.environ.get("LAKEHOLD_PYTHON")
    if not py:
        require("LAKEHOLD_PYTHON (the lakehold library's venv)")
    check = "\nassert ('readme',) in cat.list_namespaces(), cat.list_namespaces()\ncat.load_table('readme.t')\n"
    res = subprocess.run([py, "-c", localize(s.body, embedded.uri) + check], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]


def run_python_auth(s: Snippet, with_auth) -> None:
    r, cid, secret = with_auth
    body = localize(s.body, r.uri).replace("<client id>:<client secret>", f"{cid}:{secret}")
    g: dict = {"load_catalog": __import__("pyiceberg.catalog", fromlist=["load_catalog"]).load_catalog}
    exec(compile(body, f"README.md:{s.line}", "exec"), g)
    g["cat"].create_namespace("signed_in")
    assert ("signed_in",) in g["cat"].list_namespaces()


def run_serve_embedded(s: Snippet, embedded: Running) -> None:
    assert (embedded.cwd / "data").is_dir(), "the embedded default keeps its state under ./data"
    st, cfg = http("GET", embedded.uri + "/v1/config?warehouse=default")
    assert st == 200, cfg


def run_serve_postgres(s: Snippet, tmp_path) -> None:
    url = os.environ.get("CATALOG_TEST_DATABASE_URL")
    if not url:
        require("CATALOG_TEST_DATABASE_URL")
    db = f"readme_{os.getpid()}_{int(time.time())}"
    subprocess.run(["psql", url, "-q", "-c", f"CREATE DATABASE {db}"], check=True, capture_output=True)
    argv = [a if not a.startswith("postgres://") else f"{url.rsplit('/', 1)[0]}/{db}?sslmode=disable"
            for a in command_argv(s.body)]
    r = start(argv + ["--secret-key", "cmVhZG1lLXRlc3Qtc2VjcmV0LWtleS0zMi1ieXRlcyE="], tmp_path, free_port())
    try:
        assert http("GET", r.uri + "/readyz")[0] == 200
        wh = re.search(r"--warehouse (\w+)=", s.body).group(1)  # type: ignore[union-attr]
        st, cfg = http("GET", r.uri + f"/v1/config?warehouse={wh}")
        assert st == 200, cfg
    finally:
        stop(r)


def run_console(s: Snippet) -> None:
    lines = s.body.splitlines()
    assert lines[0].startswith("$ catalog ")
    argv = [catalog_bin()] + shlex.split(lines[0][len("$ catalog "):])
    res = subprocess.run(argv, capture_output=True, text=True)
    assert (res.stdout + res.stderr).rstrip("\n") == "\n".join(lines[1:])


def run_log_lines(s: Snippet, embedded: Running) -> None:
    base = embedded.uri + "/v1/default/namespaces"
    http("POST", base, {"namespace": ["ns"]})
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}
    http("POST", base + "/ns/tables", {"name": "t", "schema": schema})
    assert http("GET", base + "/ns/tables/nope")[0] == 404
    file = {"location": "file:///x.parquet", "file-format": "parquet", "file-size-in-bytes": 1, "record-count": 1,
            "spec-id": 0}
    assert http("POST", base + "/ns/tables/t/files", {"add-data-files": [file]})[0] == 400  # a v2 table
    time.sleep(0.2)
    real = [json.loads(x) for x in embedded.log.read_text().splitlines() if x.startswith("{")]
    for want in map(json.loads, s.body.splitlines()):
        same = [g for g in real if g.get("msg") == want["msg"] and g.get("error_type") == want.get("error_type")
                and g.get("error_reason") == want.get("error_reason")]
        assert same, f"no log line like {want}"
        assert set(same[-1]) == set(want), f"README keys {sorted(want)} != logged {sorted(same[-1])}"


CONFIG = re.compile(r'\.config\(\s*f?"([^"]+)",\s*(?:"([^"]*)"|([^)]+?))\s*\)')


def run_spark_conf(s: Snippet) -> None:
    src = (ROOT / s.args).read_text()
    # key -> the literal the test sets, or None when it passes a variable.
    used = {k.replace("{name}", "lake"): (None if var else lit) for k, lit, var in CONFIG.findall(src)}
    placeholders = {"spark.sql.catalog.lake.uri": README_URI, "spark.sql.catalog.lake.warehouse": "default",
                    "spark.sql.catalog.lake.credential": "<client id>:<client secret>",
                    "spark.sql.catalog.lake.oauth2-server-uri": README_URI + "/v1/oauth/tokens"}
    for key, value in re.findall(r"--conf\s+([^=\s]+)=(.*?)(?=\s+--conf\s|$)", s.body, re.M):
        assert key in used, f"{key} is not set by {s.args}"
        want = used[key]
        if want is None:  # the test passes a variable: the README shows the default catalog
            if key in placeholders:
                assert value == placeholders[key], f"{key}={value}"
            continue
        assert value == want, f"{key}={value}, but {s.args} sets {want}"


def run_trino_properties(s: Snippet) -> None:
    src = (ROOT / "integration/trino/start.sh").read_text()
    used = {ln.replace("$uri", README_URI).replace("$s3wh", "lake_s3").replace("$TRINO_S3_ENDPOINT", "http://minio:9000")
            .replace("$wh", "default") for ln in src.splitlines()}
    for ln in s.body.splitlines():
        assert ln in used, f"{ln!r} is not in the properties integration/trino/start.sh writes"


def serve_help() -> str:
    return subprocess.run([catalog_bin(), "serve", "--help"], capture_output=True, text=True, check=True).stdout


def run_flags(s: Snippet) -> None:
    # The command the snippet runs (catalog serve unless it names another).
    m = re.search(r"\bcatalog ([a-z]+)\b", s.body)
    cmd = m.group(1) if m else "serve"
    usage = subprocess.run([catalog_bin(), cmd, "--help"], capture_output=True, text=True, check=True).stdout
    for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", s.body):
        assert re.search(rf"(?m)^\s*{re.escape(flag)}\b", usage), f"{flag} is not a {cmd} flag"


def run_image(s: Snippet) -> None:
    image_help = subprocess.run(["bash", str(ROOT / "scripts/image.sh"), "--help"], capture_output=True,
                                text=True, check=True).stdout
    usage = serve_help()
    for ln in s.body.splitlines():
        if ln.startswith("#"):
            continue
        argv = shlex.split(ln)
        if argv[0] == "scripts/image.sh":
            for flag in (a for a in argv[1:] if a.startswith("--")):
                assert flag in image_help, f"scripts/image.sh has no {flag}"
        for env in re.findall(r"-e ([A-Z_]+)=", ln):
            assert f"[{env}]" in usage or f"[{env}=" in usage, f"{env} is not an environment variable of serve"
        if argv[:2] == ["docker", "exec"]:
            sub = argv[argv.index("catalog") + 1:]
            words = [a for a in sub if not a.startswith("-")][:-1]  # the command, without its argument
            res = subprocess.run([catalog_bin(), *words, "--help"], capture_output=True, text=True)
            assert res.returncode == 0, res.stderr


HANDLERS = {
    "serve-embedded": lambda s, req: run_serve_embedded(s, req.getfixturevalue("embedded")),
    "serve-postgres": lambda s, req: run_serve_postgres(s, req.getfixturevalue("tmp_path")),
    "console": lambda s, req: run_console(s),
    "log-lines": lambda s, req: run_log_lines(s, req.getfixturevalue("embedded")),
    "python": lambda s, req: run_python(s, req.getfixturevalue("embedded")),
    "python-lakehold": lambda s, req: run_python_lakehold(s, req.getfixturevalue("embedded")),
    "python-events": lambda s, req: run_python_events(s, req.getfixturevalue("embedded")),
    "python-auth": lambda s, req: run_python_auth(s, req.getfixturevalue("with_auth")),
    "spark-conf": lambda s, req: run_spark_conf(s),
    "trino-properties": lambda s, req: run_trino_properties(s),
    "flags": lambda s, req: run_flags(s),
    "image": lambda s, req: run_image(s),
}


def test_every_block_has_a_test():
    bad = [f"README.md:{s.line} ({s.kind or 'no marker'})" for s in SNIPPETS
           if s.kind != "skip" and s.kind not in HANDLERS]
    assert not bad, "blocks without a readme-test marker this file knows: " + ", ".join(bad)


@pytest.mark.parametrize("snip", [s for s in SNIPPETS if s.kind in HANDLERS or s.kind == "skip"],
                         ids=lambda s: f"L{s.line}-{s.kind}")
def test_snippet(snip: Snippet, request):
    if snip.kind == "skip":
        pytest.skip(snip.args)
    HANDLERS[snip.kind](snip, request)
