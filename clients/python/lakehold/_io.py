"""File access for one table: local files, S3 and GCS through pyarrow.fs.

Storage credentials come from what the catalog vends with the table (its
``config`` and ``storage-credentials``), merged over the catalog
properties; the client configuration needs no long-lived keys. Locations
may be absolute URIs, bare paths or paths relative to the table location
(plans carry ``data/x.parquet``).
"""

from __future__ import annotations

import datetime as _dt
import threading
from typing import Any
from urllib.parse import unquote, urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from .errors import LakeholdError

_TRUE = ("true", "t", "1", "on", "yes")


# The property prefixes FileIO reads; everything else (the catalog's
# ``credential``, ``token``, ``header.*``, ...) is the catalog session's.
STORAGE_PREFIXES = ("s3.", "gcs.", "adls.", "client.")


def storage_properties(props: dict[str, str]) -> dict[str, str]:
    """Only the storage settings of ``props``: what may travel to another
    process that reads and writes files but never talks to the catalog."""
    return {k: v for k, v in props.items() if k.startswith(STORAGE_PREFIXES)}


class FileIO:
    """Opens files of one table.

    ``properties``: catalog properties overlaid with the table's ``config``;
    ``storage_credentials``: the LoadTableResult ``storage-credentials``
    list (``{"prefix": ..., "config": {...}}``), whose longest matching
    prefix wins over ``properties`` for a location; ``base_location``: the
    table location relative paths resolve against.
    Methods raise :class:`LakeholdError` for an unsupported scheme and
    pyarrow's ``OSError`` for storage failures.
    """

    def __init__(self, properties: dict[str, str] | None = None,
                 storage_credentials: list[dict[str, Any]] | None = None,
                 base_location: str | None = None) -> None:
        self.properties = dict(properties or {})
        self.storage_credentials = sorted(storage_credentials or [], key=lambda c: -len(c.get("prefix", "")))
        self.base_location = base_location.rstrip("/") if base_location else None
        self._cache: dict[tuple[str, ...], pafs.FileSystem] = {}
        self._lock = threading.Lock()

    def resolve(self, location: str) -> str:
        """An absolute location for ``location`` (relative ones join the table location)."""
        if "://" in location or location.startswith("/") or not self.base_location:
            return location
        return f"{self.base_location}/{location}"

    def _props_for(self, location: str) -> dict[str, str]:
        for cred in self.storage_credentials:
            if location.startswith(cred.get("prefix", "\0")):
                return {**self.properties, **(cred.get("config") or {})}
        return self.properties

    def filesystem_and_path(self, location: str) -> tuple[pafs.FileSystem, str]:
        """The pyarrow filesystem holding ``location`` and the path in it."""
        loc = self.resolve(location)
        parts = urlsplit(loc)
        scheme = parts.scheme.lower() if "://" in loc else ""
        if scheme in ("", "file"):
            return self._local(), unquote(parts.path) if scheme else loc
        props = self._props_for(loc)
        path = f"{parts.netloc}{unquote(parts.path)}"
        if scheme in ("s3", "s3a", "s3n"):
            return self._cached(("s3", *_s3_key(props)), lambda: _s3(props)), path
        if scheme in ("gs", "gcs"):
            return self._cached(("gcs", props.get("gcs.oauth2.token", ""), props.get("gcs.service.host", "")),
                                lambda: _gcs(props)), path
        raise LakeholdError(f"unsupported storage scheme {scheme!r} (file, s3, gs are supported)")

    def _local(self) -> pafs.FileSystem:
        return self._cached(("file",), pafs.LocalFileSystem)

    def _cached(self, key: tuple[str, ...], make: Any) -> pafs.FileSystem:
        with self._lock:
            fs = self._cache.get(key)
            if fs is None:
                fs = self._cache[key] = make()
            return fs

    def open_input(self, location: str) -> pa.NativeFile:
        """A random-access reader of ``location``."""
        fs, path = self.filesystem_and_path(location)
        return fs.open_input_file(path)

    def open_output(self, location: str) -> pa.NativeFile:
        """A writer of ``location`` (replacing it); local parent directories are created."""
        fs, path = self.filesystem_and_path(location)
        if isinstance(fs, pafs.LocalFileSystem):
            parent = path.rsplit("/", 1)[0]
            if parent:
                fs.create_dir(parent, recursive=True)
        return fs.open_output_stream(path)

    def size(self, location: str) -> int:
        """The size of ``location`` in bytes."""
        fs, path = self.filesystem_and_path(location)
        return int(fs.get_file_info(path).size)

    def delete(self, location: str) -> None:
        """Delete ``location``; a missing file is not an error."""
        fs, path = self.filesystem_and_path(location)
        try:
            fs.delete_file(path)
        except FileNotFoundError:
            pass


def _s3_key(p: dict[str, str]) -> tuple[str, ...]:
    return tuple(p.get(k, "") for k in ("s3.access-key-id", "s3.session-token", "s3.endpoint", "s3.region",
                                       "client.region"))


def _s3(p: dict[str, str]) -> pafs.FileSystem:
    kwargs: dict[str, Any] = {}
    if p.get("s3.access-key-id"):
        kwargs.update(access_key=p["s3.access-key-id"], secret_key=p.get("s3.secret-access-key", ""))
        if p.get("s3.session-token"):
            kwargs["session_token"] = p["s3.session-token"]
    region = p.get("s3.region") or p.get("client.region")
    if region:
        kwargs["region"] = region
    endpoint = p.get("s3.endpoint")
    if endpoint:
        ep = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
        kwargs["endpoint_override"] = ep.netloc + ep.path.rstrip("/")
        kwargs["scheme"] = ep.scheme
        # pyarrow addresses an endpoint override path-style unless told
        # otherwise; only an explicit "false" asks for virtual hosts.
        if p.get("s3.path-style-access", "").lower() in ("false", "f", "0", "off", "no"):
            kwargs["force_virtual_addressing"] = True
    return pafs.S3FileSystem(**kwargs)


def _gcs(p: dict[str, str]) -> pafs.FileSystem:
    kwargs: dict[str, Any] = {}
    token = p.get("gcs.oauth2.token")
    if token:
        kwargs["access_token"] = token
        expires_ms = p.get("gcs.oauth2.token-expires-at")
        kwargs["credential_token_expiration"] = (
            _dt.datetime.fromtimestamp(int(expires_ms) / 1000, tz=_dt.timezone.utc) if expires_ms
            else _dt.datetime.now(tz=_dt.timezone.utc) + _dt.timedelta(hours=1))
    elif p.get("gcs.no-auth", "").lower() in _TRUE:
        kwargs["anonymous"] = True
    host = p.get("gcs.service.host")
    if host:
        ep = urlsplit(host if "://" in host else f"https://{host}")
        kwargs["endpoint_override"] = ep.netloc
        kwargs["scheme"] = ep.scheme
    if p.get("gcs.project-id"):
        kwargs["project_id"] = p["gcs.project-id"]
    return pafs.GcsFileSystem(**kwargs)
