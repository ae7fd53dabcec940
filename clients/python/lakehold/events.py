"""Change events of a warehouse (``POST /v1/{prefix}/events``): every change
the catalog committed, in commit order, as the Iceberg REST events proposal
shapes them. Delivery is at least once: key what you do by ``Event.id``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ._rest import RestSession


@dataclass(frozen=True)
class Event:
    """One committed change. ``operation`` is the operation object
    (``operation-type``, the identifier, the table or view UUID and, for
    creates and commits, the updates)."""

    id: str
    request_id: str
    request_event_count: int
    timestamp_ms: int
    actor: str | None
    operation: dict[str, Any]

    @property
    def operation_type(self) -> str:
        """``create-table``, ``update-table``, ``drop-namespace``, ..."""
        return str(self.operation.get("operation-type", ""))

    @classmethod
    def from_json(cls, e: dict[str, Any]) -> Event:
        return cls(id=e["event-id"], request_id=e["request-id"], request_event_count=int(e["request-event-count"]),
                   timestamp_ms=int(e["timestamp-ms"]), actor=(e.get("actor") or {}).get("id"),
                   operation=e["operation"])


@dataclass(frozen=True)
class EventPage:
    """One page of events and the token to continue from; the token is
    there even when ``events`` is empty, to ask again later."""

    events: list[Event]
    continuation_token: str


def query(rest: RestSession, *, continuation_token: str | None = None, page_size: int | None = None,
          since_ms: int | None = None, operation_types: list[str] | None = None,
          objects: list[str | tuple[str, ...]] | None = None, object_types: list[str] | None = None) -> EventPage:
    """One page; see :meth:`lakehold.Catalog.events`."""
    body: dict[str, Any] = {}
    if continuation_token:
        body["continuation-token"] = continuation_token
    if page_size:
        body["page-size"] = page_size
    if since_ms is not None:
        body["since-timestamp-ms"] = since_ms
    if operation_types:
        body["operation-types"] = operation_types
    if objects:
        body["catalog-objects-by-name"] = [list(o.split(".")) if isinstance(o, str) else list(o) for o in objects]
    if object_types:
        body["object-types"] = object_types
    res = rest.request("POST", "events", json=body)
    return EventPage([Event.from_json(e) for e in res.get("events") or []], str(res["continuation-token"]))


def follow(rest: RestSession, continuation_token: str | None = None, **filters: Any) -> Iterator[EventPage]:
    """Pages from ``continuation_token`` until the one that is empty."""
    while True:
        page = query(rest, continuation_token=continuation_token, **filters)
        yield page
        if not page.events:
            return
        continuation_token = page.continuation_token
