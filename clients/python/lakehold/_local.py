"""An embedded catalog: ``lakehold.local(path)`` runs ``catalog serve`` over a
data directory on a free loopback port and returns a connected Catalog.

The process is the catalog's embedded mode (SQLite and a ``file://``
warehouse named ``default`` under the directory), so a later ``local(path)``
reopens the same tables. It stops on :meth:`LocalCatalog.close`, at the end
of a ``with`` block, when the catalog is garbage collected, or at interpreter
exit, whichever comes first.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from pathlib import Path
from typing import IO

from .catalog import Catalog
from ._rest import RestSession
from .errors import CatalogBinaryNotFoundError, LocalCatalogError

# The variable naming a catalog binary, checked after the wheel's own.
BIN_ENV = "LAKEHOLD_CATALOG_BIN"
_EXE = "catalog.exe" if sys.platform == "win32" else "catalog"
# How many ports to try when another process takes ours between the probe
# and the catalog's bind.
_PORT_TRIES = 5
_STOP_GRACE_S = 10.0
_STDERR_TAIL_LINES = 20


def find_catalog_binary() -> str:
    """The catalog binary :func:`local` runs: the one shipped in a platform
    wheel (``lakehold/_bin/catalog``), else ``$LAKEHOLD_CATALOG_BIN``, else
    ``catalog`` on PATH. Raises CatalogBinaryNotFoundError naming the three
    places when none holds one, or when LAKEHOLD_CATALOG_BIN is set to
    something that is not an executable file."""
    bundled = Path(__file__).resolve().parent / "_bin" / _EXE
    if _executable(bundled):
        return str(bundled)
    env = os.environ.get(BIN_ENV)
    if env:
        if _executable(Path(env)):
            return env
        raise CatalogBinaryNotFoundError(
            f"{BIN_ENV} is set to {env!r}, which is not an executable file; "
            f"unset it to use {_where()}")
    on_path = shutil.which(_EXE)
    if on_path:
        return on_path
    raise CatalogBinaryNotFoundError(f"no catalog binary found: looked for {_where()}")


def _where() -> str:
    return (f"(1) lakehold/_bin/{_EXE} in the installed package (the platform wheel built by `make wheel`), "
            f"(2) ${BIN_ENV}, (3) `{_EXE}` on PATH")


def _executable(p: Path) -> bool:
    return p.is_file() and os.access(p, os.X_OK)


def local(path: str | os.PathLike[str], *, name: str = "local", timeout: float = 60.0) -> LocalCatalog:
    """Start an embedded catalog over the data directory ``path`` (created
    when missing) and connect to its ``default`` warehouse. ``timeout`` is
    how long to wait for it to answer. Raises CatalogBinaryNotFoundError
    when there is no binary to run, LocalCatalogError (with the tail of its
    stderr) when the process exits or does not answer in time."""
    binary = find_catalog_binary()
    data_dir = os.fspath(path)
    last: LocalCatalogError | None = None
    for _ in range(_PORT_TRIES):
        proc = _Process.start(binary, data_dir)
        try:
            proc.wait_ready(timeout)
        except _PortTaken as e:
            last = LocalCatalogError(str(e))
            continue
        except BaseException:
            proc.stop()
            raise
        try:
            return LocalCatalog(name, proc, binary)
        except BaseException:
            proc.stop()
            raise
    assert last is not None
    raise last


class LocalCatalog(Catalog):
    """A Catalog connected to a catalog process this library started.
    :meth:`close` stops the process; usable as a context manager."""

    def __init__(self, name: str, proc: _Process, binary: str) -> None:
        # Not Catalog.__init__: the process listens on loopback, so an
        # http_proxy from the environment must not carry its requests
        # (the first is /v1/config, at construction) off the machine.
        self.name = name
        self._rest = RestSession({"uri": proc.uri, "warehouse": "default"}, direct=True)
        self.uri = proc.uri
        self.binary = binary
        self.data_dir = proc.data_dir
        self._proc = proc
        # Runs on close(), on garbage collection, or at interpreter exit;
        # it holds the process, never the catalog, so the catalog can be collected.
        self._finalizer = weakref.finalize(self, proc.stop)

    @property
    def running(self) -> bool:
        """Whether the catalog process is still running."""
        return self._proc.popen.poll() is None

    def close(self) -> None:
        """Stop the catalog process (SIGTERM, then SIGKILL after a grace
        period). Calling it again does nothing; it raises nothing."""
        self._finalizer()
        self._rest.http.close()

    def __enter__(self) -> LocalCatalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _PortTaken(Exception):
    """The catalog could not bind its port: try another."""


class _Process:
    """One ``catalog serve`` process and the file its stderr goes to."""

    def __init__(self, popen: subprocess.Popen[bytes], uri: str, data_dir: str, stderr: IO[bytes]) -> None:
        self.popen, self.uri, self.data_dir, self._stderr = popen, uri, data_dir, stderr

    @classmethod
    def start(cls, binary: str, data_dir: str) -> _Process:
        port = _free_port()
        listen = f"127.0.0.1:{port}"
        stderr = tempfile.TemporaryFile(prefix="lakehold-local-")
        argv = [binary, "serve", "--data-dir", data_dir, "--listen", listen, "--log-level", "warn"]
        try:
            popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=stderr, env=_child_env())
        except OSError as e:
            stderr.close()
            raise LocalCatalogError(f"cannot run the catalog binary: {e.strerror or type(e).__name__}") from None
        return cls(popen, f"http://{listen}", data_dir, stderr)

    def wait_ready(self, timeout: float) -> None:
        """Return once /v1/config answers; _PortTaken when the bind failed,
        LocalCatalogError when the process exited or the time ran out."""
        deadline = time.monotonic() + timeout
        while True:
            code = self.popen.poll()
            if code is not None:
                tail = self.stderr_tail()
                if "address already in use" in tail.lower():
                    self.stop()
                    raise _PortTaken(f"the catalog could not bind {self.uri}: {tail}")
                self.stop()
                raise LocalCatalogError(f"the catalog exited with status {code} before answering{_tail(tail)}")
            # Our process must still run once something answers: another
            # server that took the port in between answers too.
            if _answers(self.uri) and self.popen.poll() is None:
                return
            if time.monotonic() > deadline:
                tail = self.stderr_tail()
                self.stop()
                raise LocalCatalogError(f"the catalog did not answer within {timeout:g}s{_tail(tail)}")
            time.sleep(0.05)

    def stderr_tail(self) -> str:
        if self._stderr.closed:
            return ""
        self._stderr.flush()
        self._stderr.seek(0)
        lines = self._stderr.read().decode("utf-8", "replace").splitlines()
        return "\n".join(lines[-_STDERR_TAIL_LINES:])[-4000:]

    def stop(self) -> None:
        """SIGTERM, wait, then SIGKILL; idempotent."""
        p = self.popen
        if p.poll() is None:
            try:
                p.send_signal(signal.SIGTERM)
                p.wait(_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            except ProcessLookupError:  # pragma: no cover - exited in between
                pass
        if not self._stderr.closed:
            self._stderr.close()


def _tail(text: str) -> str:
    return f"; its stderr ends:\n{text}" if text.strip() else " (no stderr)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Loopback probes go direct, whatever proxy the environment names.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _answers(uri: str) -> bool:
    try:
        with _DIRECT.open(f"{uri}/v1/config?warehouse=default", timeout=2) as r:
            return bool(r.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _child_env() -> dict[str, str]:
    # The process is the embedded default over the given directory: the
    # caller's CATALOG_* settings (a Postgres URL, a secret key, auth) are
    # meant for their own servers, and would make a reopened directory
    # depend on them.
    return {k: v for k, v in os.environ.items() if not k.startswith("CATALOG_")}
