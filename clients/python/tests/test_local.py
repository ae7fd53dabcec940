"""lakehold.local: an embedded catalog process over a data directory.

The binary comes from LAKEHOLD_CATALOG_BIN, set to the harness's catalog
binary; the wheel that ships its own is tested by integration/wheel/check.sh.
"""

from __future__ import annotations

import os
import stat
import urllib.error
import urllib.request
from pathlib import Path

import pyarrow as pa
import pytest

import lakehold
from lakehold._local import BIN_ENV

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


@pytest.fixture
def with_bin(catalog_bin: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(BIN_ENV, catalog_bin)
    return catalog_bin


def _answers(uri: str) -> bool:
    try:
        with urllib.request.urlopen(f"{uri}/v1/config", timeout=2):
            return True
    except (urllib.error.URLError, OSError):
        return False


def test_tables_survive_close_and_reopen(with_bin: str, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    rows = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]}, schema=SCHEMA)
    cat = lakehold.local(lake)
    try:
        assert cat.binary == with_bin
        cat.create_namespace("db")
        cat.create_table("db.t", SCHEMA).append(rows)
    finally:
        cat.close()
    assert not cat.running
    cat.close()  # a second close does nothing

    with lakehold.local(lake) as again:
        assert again.uri != "" and again.list_tables("db") == [("db", "t")]
        got = again.load_table("db.t").scan().to_arrow().sort_by("id")
        assert got.to_pylist() == rows.to_pylist()


def test_context_manager_stops_the_process(with_bin: str, tmp_path: Path) -> None:
    with lakehold.local(tmp_path / "lake") as cat:
        uri = cat.uri
        assert cat.running and _answers(uri)
    assert not cat.running
    assert not _answers(uri)


def test_collected_catalog_stops_its_process(with_bin: str, tmp_path: Path) -> None:
    cat = lakehold.local(tmp_path / "lake")
    proc = cat._proc.popen
    del cat
    import gc

    gc.collect()
    assert proc.poll() is not None


def test_bad_binary_path_names_the_places_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BIN_ENV, str(tmp_path / "no-such-catalog"))
    with pytest.raises(lakehold.CatalogBinaryNotFoundError) as e:
        lakehold.local(tmp_path / "lake")
    msg = str(e.value)
    assert "no-such-catalog" in msg and BIN_ENV in msg and "lakehold/_bin/catalog" in msg and "PATH" in msg


def test_no_binary_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BIN_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(lakehold.CatalogBinaryNotFoundError, match="no catalog binary found"):
        lakehold.local(tmp_path / "lake")


def test_failed_start_carries_stderr_tail(with_bin: str, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(lakehold.LocalCatalogError, match="exited with status") as e:
        lakehold.local(not_a_dir)
    assert "stderr ends" in str(e.value)


def test_process_that_dies_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "catalog"
    fake.write_text("#!/bin/sh\necho 'boom: cannot open the database' >&2\nexit 3\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(BIN_ENV, str(fake))
    with pytest.raises(lakehold.LocalCatalogError) as e:
        lakehold.local(tmp_path / "lake")
    assert "status 3" in str(e.value) and "boom: cannot open the database" in str(e.value)


def test_port_taken_is_retried(with_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from lakehold import _local as local_mod

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    ports = iter([busy.getsockname()[1]])
    real = local_mod._free_port
    monkeypatch.setattr(local_mod, "_free_port", lambda: next(ports, None) or real())
    try:
        with lakehold.local(tmp_path / "lake") as cat:
            assert not cat.uri.endswith(f":{busy.getsockname()[1]}")
            assert cat.list_namespaces() == []
    finally:
        busy.close()


def test_catalog_env_is_not_passed_on(with_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A Postgres URL meant for another server must not turn the embedded
    # catalog into a client of it.
    monkeypatch.setenv("CATALOG_DATABASE_URL", "postgres://nobody@127.0.0.1:1/none")
    with lakehold.local(tmp_path / "lake") as cat:
        assert cat.list_namespaces() == []
    assert (tmp_path / "lake").is_dir() and os.listdir(tmp_path / "lake")


def test_silent_process_times_out_and_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "catalog"
    pidfile = tmp_path / "pid"
    fake.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 60\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(BIN_ENV, str(fake))
    with pytest.raises(lakehold.LocalCatalogError, match="did not answer within 1s"):
        lakehold.local(tmp_path / "lake", timeout=1)
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_proxy_in_the_environment_is_not_used(with_bin: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The process listens on loopback: readiness probes and the catalog's
    requests go direct even when http_proxy names a proxy that answers
    nothing (port 9 on loopback)."""
    for k in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.setenv(k, "http://127.0.0.1:9")
    for k in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(k, raising=False)
    with lakehold.local(tmp_path / "lake") as cat:
        cat.create_namespace("db")
        assert cat.list_namespaces() == [("db",)]
