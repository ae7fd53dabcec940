"""TLS and extra headers: ``ssl.cabundle``, ``ssl.client.cert``/``ssl.client.key`` and ``header.*``.

The catalog serves plain HTTP (TLS is terminated in front of it in a
deployment), so the test puts a real TLS terminator in front of a real
catalog: a Python reverse proxy with certificates made by ``openssl`` for
this run (a CA, a server certificate for 127.0.0.1, a client certificate).
The proxy records the headers of every request it forwards. Data files are
on the local warehouse and are read directly, as with any file:// table.
"""

from __future__ import annotations

import http.client
import http.server
import shutil
import ssl
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pytest

import lakehold
from conftest import Running, start_catalog, stop_catalog


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _make_pki(d: Path) -> None:
    """ca.pem/ca.key, server.pem/server.key (IP 127.0.0.1), client.pem/client.key."""
    # Python verifies strictly (VERIFY_X509_STRICT): a CA with key usage
    # and key ids, leaves with the authority key id.
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=lakehold-test-ca",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             "-addext", "subjectKeyIdentifier=hash", "-keyout", "ca.key", "-out", "ca.pem", cwd=d)
    leaf = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n" \
           "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n"
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth"),
                      ("client", "extendedKeyUsage=clientAuth")):
        (d / f"{name}.ext").write_text(leaf + ext + "\n")
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN=lakehold-test-{name}",
                 "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                 "-days", "1", "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=d)


@dataclass
class Proxy:
    uri: str
    headers: list[dict[str, str]] = field(default_factory=list)
    server: http.server.ThreadingHTTPServer | None = None


def _start_proxy(upstream: str, pki: Path, require_client_cert: bool) -> Proxy:
    host, port = upstream.removeprefix("http://").split(":")
    seen: list[dict[str, str]] = []

    class Forward(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self) -> None:
            seen.append({k.lower(): v for k, v in self.headers.items()})
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            conn = http.client.HTTPConnection(host, int(port), timeout=60)
            hop = {"connection", "keep-alive", "transfer-encoding", "host"}
            conn.request(self.command, self.path, body=body or None,
                         headers={k: v for k, v in self.headers.items() if k.lower() not in hop})
            resp = conn.getresponse()
            data = resp.read()
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in hop | {"content-length"}:
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            conn.close()

        do_GET = do_POST = do_DELETE = do_HEAD = do_PUT = _forward

        def log_message(self, *args: object) -> None:
            pass

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki / "server.pem", pki / "server.key")
    if require_client_cert:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(pki / "ca.pem")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Forward)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return Proxy(uri=f"https://127.0.0.1:{srv.server_address[1]}", headers=seen, server=srv)


@pytest.fixture(scope="module")
def tls_setup(catalog_bin: str) -> Iterator[tuple[Running, Path]]:
    work = Path(tempfile.mkdtemp(prefix="lakehold-py-tls-"))
    pki = work / "pki"
    pki.mkdir()
    _make_pki(pki)
    wh = work / "warehouse"
    wh.mkdir()
    r = start_catalog(catalog_bin, work, warehouse_dir=wh)
    yield r, pki
    stop_catalog(r)
    shutil.rmtree(work, ignore_errors=True)


def _round_trip(cat: lakehold.Catalog, name: str) -> None:
    cat.create_namespace(name)
    t = cat.create_table(f"{name}.t", pa.schema([pa.field("id", pa.int64(), nullable=False)]))
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    got = cat.load_table(f"{name}.t").scan().to_arrow().sort_by("id").column("id").to_pylist()
    assert got == [1, 2, 3]


def test_ca_bundle_and_headers(tls_setup: tuple[Running, Path]) -> None:
    r, pki = tls_setup
    proxy = _start_proxy(r.uri, pki, require_client_cert=False)
    try:
        cat = lakehold.load_catalog("tls", uri=proxy.uri, warehouse=r.warehouse, **{
            "ssl.cabundle": str(pki / "ca.pem"), "header.X-Request-Source": "feature-refresh"})
        _round_trip(cat, "tls_ns")
        assert len(proxy.headers) >= 5, "config, namespace, create, commit, load, plan: all through TLS"
        assert all(h.get("x-request-source") == "feature-refresh" for h in proxy.headers), proxy.headers
        assert all(h.get("x-iceberg-column-files") == "true" for h in proxy.headers)

        # The system trust store does not know this CA: refused, no request forwarded.
        before = len(proxy.headers)
        with pytest.raises(lakehold.TransportError):
            lakehold.load_catalog("untrusted", uri=proxy.uri, warehouse=r.warehouse)
        assert len(proxy.headers) == before
    finally:
        assert proxy.server is not None
        proxy.server.shutdown()


def test_client_certificate(tls_setup: tuple[Running, Path]) -> None:
    r, pki = tls_setup
    proxy = _start_proxy(r.uri, pki, require_client_cert=True)
    try:
        cat = lakehold.load_catalog("mtls", uri=proxy.uri, warehouse=r.warehouse, **{
            "ssl.cabundle": str(pki / "ca.pem"), "ssl.client.cert": str(pki / "client.pem"),
            "ssl.client.key": str(pki / "client.key")})
        _round_trip(cat, "mtls_ns")
        with pytest.raises(lakehold.TransportError):
            lakehold.load_catalog("nocert", uri=proxy.uri, warehouse=r.warehouse, **{"ssl.cabundle": str(pki / "ca.pem")})
    finally:
        assert proxy.server is not None
        proxy.server.shutdown()
