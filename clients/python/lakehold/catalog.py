"""Catalog: namespaces and tables of one warehouse of a Lakehold catalog."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pyarrow as pa

from . import _commit, _schema, events as _events
from ._rest import RestSession
from .errors import LakeholdError, NoSuchTableError
from .table import Table

Identifier = str | tuple[str, ...] | list[str]

# The separator of multi-level namespaces in REST paths.
_NS_SEP = "\x1f"


def load_catalog(name: str = "default", **properties: str) -> Catalog:
    """Connect to a catalog with PyIceberg-style REST properties (``uri``,
    ``warehouse``, ``credential`` or ``token``, ``oauth2-server-uri``,
    ``scope``, ``header.*``, ``ssl.cabundle``, ``ssl.client.cert``,
    ``ssl.client.key``). Raises LakeholdError subclasses when the catalog
    cannot be reached or refuses the credentials."""
    return Catalog(name, properties)


def split_identifier(identifier: Identifier) -> tuple[tuple[str, ...], str]:
    """(namespace levels, table name) of ``"a.b.t"`` or ``("a", "b", "t")``;
    LakeholdError when there is no namespace."""
    parts = tuple(identifier.split(".")) if isinstance(identifier, str) else tuple(identifier)
    if len(parts) < 2 or not all(parts):
        raise LakeholdError(f"table identifier {identifier!r} needs a namespace and a name")
    return parts[:-1], parts[-1]


def namespace_path(namespace: str | tuple[str, ...] | list[str]) -> str:
    """The URL path segment of a namespace."""
    levels = tuple(namespace.split(".")) if isinstance(namespace, str) else tuple(namespace)
    return quote(_NS_SEP.join(levels), safe="")


class Catalog:
    """One warehouse of a catalog. Methods raise the :mod:`lakehold.errors`
    class of the catalog's answer (NoSuchNamespaceError, AlreadyExistsError,
    NoSuchTableError, ForbiddenError, ...)."""

    def __init__(self, name: str, properties: dict[str, str]) -> None:
        self.name = name
        self._rest = RestSession(properties)

    @property
    def properties(self) -> dict[str, str]:
        """Merged catalog properties (defaults, given, overrides)."""
        return self._rest.properties

    def create_namespace(self, namespace: str | tuple[str, ...], properties: dict[str, str] | None = None) -> None:
        """Create a namespace; AlreadyExistsError when it exists."""
        levels = list(namespace.split(".")) if isinstance(namespace, str) else list(namespace)
        self._rest.request("POST", "namespaces", json={"namespace": levels, "properties": properties or {}})

    def list_namespaces(self, parent: str | tuple[str, ...] | None = None) -> list[tuple[str, ...]]:
        """Namespaces (under ``parent`` when given), following pages."""
        params = {"parent": _NS_SEP.join(parent.split(".") if isinstance(parent, str) else parent)} if parent else {}
        return [tuple(ns) for ns in self._pages("namespaces", "namespaces", params)]

    def list_tables(self, namespace: str | tuple[str, ...]) -> list[tuple[str, ...]]:
        """Tables of ``namespace`` as (levels..., name); NoSuchNamespaceError."""
        ids = self._pages(f"namespaces/{namespace_path(namespace)}/tables", "identifiers", {})
        return [(*i["namespace"], i["name"]) for i in ids]

    def _pages(self, path: str, key: str, params: dict[str, str]) -> list[Any]:
        out: list[Any] = []
        token: str | None = None
        while True:
            q = dict(params, **({"pageToken": token} if token else {}))
            body = self._rest.request("GET", path, params=q or None)
            out.extend(body.get(key) or [])
            token = body.get("next-page-token")
            if not token:
                return out

    def create_table(self, identifier: Identifier, schema: pa.Schema,
                     partition_spec: list[tuple[str, str]] | None = None,
                     properties: dict[str, str] | None = None, format_version: int = 4,
                     location: str | None = None) -> Table:
        """Create a table from an Arrow schema; the catalog assigns the field
        ids, read back into the returned Table. ``partition_spec`` is a list
        of (transform, source column), e.g. ``[("day", "ts"), ("bucket[16]", "id")]``.
        Raises AlreadyExistsError, NoSuchNamespaceError, ValidationError."""
        ns, name = split_identifier(identifier)
        ice = _schema.from_arrow_schema(schema)
        body: dict[str, Any] = {
            "name": name, "schema": ice, "partition-spec": _schema.partition_spec(partition_spec, ice),
            "properties": {**(properties or {}), "format-version": str(format_version)},
        }
        if location:
            body["location"] = location
        res = self._rest.request("POST", f"namespaces/{namespace_path(ns)}/tables", json=body)
        return Table((*ns, name), res, self._rest)

    def load_table(self, identifier: Identifier) -> Table:
        """Load a table; NoSuchTableError when it does not exist."""
        ns, name = split_identifier(identifier)
        res = self._rest.request("GET", f"namespaces/{namespace_path(ns)}/tables/{quote(name, safe='')}")
        return Table((*ns, name), res, self._rest)

    def drop_table(self, identifier: Identifier, purge: bool = False) -> None:
        """Drop a table (and its files with ``purge``); NoSuchTableError."""
        ns, name = split_identifier(identifier)
        self._rest.request("DELETE", f"namespaces/{namespace_path(ns)}/tables/{quote(name, safe='')}",
                           params={"purgeRequested": "true"} if purge else None)

    def register_table(self, identifier: Identifier, metadata_location: str) -> Table:
        """Register the table whose metadata file is ``metadata_location``
        under ``identifier``; AlreadyExistsError, NoSuchNamespaceError."""
        ns, name = split_identifier(identifier)
        res = _commit.post(self._rest, f"namespaces/{namespace_path(ns)}/register",
                           {"name": name, "metadata-location": metadata_location})
        return Table((*ns, name), res, self._rest)

    def unregister_table(self, identifier: Identifier) -> str:
        """Remove a table from the catalog without deleting any of its files
        and return its last metadata location, for ``register_table`` here
        or in another catalog. Retried with one Idempotency-Key, so it runs
        once. NoSuchTableError when the table does not exist."""
        ns, name = split_identifier(identifier)
        res = _commit.post(self._rest, f"namespaces/{namespace_path(ns)}/tables/{quote(name, safe='')}/unregister", {})
        return str(res["metadata-location"])

    def events(self, continuation_token: str | None = None, *, page_size: int | None = None,
               since_ms: int | None = None, operation_types: list[str] | None = None,
               objects: list[str | tuple[str, ...]] | None = None,
               object_types: list[str] | None = None) -> _events.EventPage:
        """One page of the warehouse's change events, in commit order, after
        ``continuation_token`` (from the start, or from ``since_ms``, without
        one). ``objects`` are namespaces (everything below them) or tables
        and views by name; ``object_types`` of ``namespace``, ``table``,
        ``view``. Only events of objects the caller may read are listed.
        NotFoundError when events are off; a token whose events were pruned
        raises LakeholdError (410)."""
        return _events.query(self._rest, continuation_token=continuation_token, page_size=page_size,
                             since_ms=since_ms, operation_types=operation_types, objects=objects,
                             object_types=object_types)

    def table_exists(self, identifier: Identifier) -> bool:
        """Whether the table exists."""
        try:
            self.load_table(identifier)
        except NoSuchTableError:
            return False
        return True
